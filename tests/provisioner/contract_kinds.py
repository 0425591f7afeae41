"""Two small kinds and an in-memory API that exercise every part of the kind
contract the engine offers, independently of any real kind:

- `folders` (key: name) with a sensitive `token` compared through digests that
  include the live id, and child `links` written inside a folder;
- `folderLinks`, a child kind keyed by (agent, folder), made with one PUT after
  its folder exists;
- `jobs`, keyed by (agent, name), naming a folder by name (its id known after
  create), with lifecycle decisions: replace when pending, a warning when
  running, cancel when removed.

The kinds are registered only while a test uses the `contract_kinds` fixture.
"""

from __future__ import annotations

import hashlib
import uuid
from typing import Any, ClassVar, Literal

from pydantic import Field

from agentform.core.errors import ApiError
from agentform.core.sensitive import Sensitive
from agentform.kinds.base import Kind
from agentform.kinds.context import LiveRead, PlanContext
from agentform.kinds.keys import Key
from agentform.kinds.model import (
    ApiCall,
    ChildModel,
    Decision,
    Declared,
    DesiredModel,
    FieldChange,
    LiveObject,
    State,
)
from agentform.kinds.references import References
from agentform.kinds.slots import sensitive_value

ORG = {"organizationId": "org-1", "organizationName": "contract"}
ALPHA = "00000000-0000-4000-8000-0000000000a1"
AGENTS = {ALPHA: "alpha", "00000000-0000-4000-8000-0000000000b2": "beta"}


def digest(object_id: str, value: str) -> str:
    return "sha256:" + hashlib.sha256(f"{object_id}:token:{value}".encode()).hexdigest()


class FakeApi:
    """Folders, links and jobs in memory, with a log of every call."""

    def __init__(self) -> None:
        self.folders: dict[str, dict[str, Any]] = {}
        self.tokens: dict[str, str] = {}  # folder id -> token value (never answered)
        self.links: dict[tuple[str, str], dict[str, Any]] = {}
        self.jobs: dict[str, dict[str, Any]] = {}
        self.calls: list[tuple[str, str, Any]] = []
        self.fail: set[tuple[str, str]] = set()  # (method, first path segment): a 500
        self.lose: set[tuple[str, str]] = set()  # (method, path): made, but the answer is lost

    async def request(self, method: str, path: str, **kw: Any) -> Any:
        answer = await self._handle(method, path, **kw)
        if (method, path) in self.lose:
            self.lose.discard((method, path))
            assert kw.get("lookup") is not None, "a create without a lookup"
            return await kw["lookup"]()  # what ApiClient does when the answer is lost
        return answer

    def writes(self) -> list[tuple[str, str, Any]]:
        return [c for c in self.calls if c[0] != "GET"]

    def _folder(self, folder: dict[str, Any]) -> dict[str, Any]:
        out = dict(folder)
        if folder["id"] in self.tokens:
            out["token"] = digest(folder["id"], self.tokens[folder["id"]])
        return out

    async def list_all(self, path: str, params: dict[str, Any] | None = None) -> list[Any]:
        self.calls.append(("GET", path, None))
        if path == "/agents":
            return [{"id": i, "name": n} for i, n in AGENTS.items()]
        if path == "/folders":
            return [self._folder(f) for f in self.folders.values()]
        if path.startswith("/folders/") and path.endswith("/links"):
            fid = path.split("/")[2]
            return [dict(v) for (a, f), v in self.links.items() if f == fid]
        if path == "/jobs":
            jobs = list(self.jobs.values())
            if params and "searchName" in params:
                jobs = [j for j in jobs if params["searchName"] in j["name"]]
            return [dict(j) for j in jobs]
        return []  # the real kinds' collections: empty here

    async def list_and_read(self, path: str, wanted: Any, read: Any) -> Any:
        items = await self.list_all(path)
        return items, {i["id"]: await read(i) for i in items if wanted(i)}

    async def _handle(self, method: str, path: str, **kw: Any) -> Any:
        body: Any = kw.get("json")
        self.calls.append((method, path, body))
        if (method, path.split("/")[1]) in self.fail:
            raise ApiError(method, path, 500, "injected")
        parts = path.strip("/").split("/")
        if path == "/context":
            return ORG
        if method == "POST" and path == "/folders":
            new = {"id": str(uuid.uuid4()), "name": body["name"], "color": body.get("color")}
            self.folders[new["id"]] = new
            if "token" in body:
                self.tokens[new["id"]] = body["token"]
            return self._folder(new)
        if parts[0] == "folders" and method == "PATCH":
            folder = self.folders[parts[1]]
            folder.update({k: v for k, v in body.items() if k != "token"})
            if "token" in body:
                self.tokens[parts[1]] = body["token"]
            return self._folder(folder)
        if parts[0] == "folders" and method == "DELETE":
            del self.folders[parts[1]]
            self.links = {k: v for k, v in self.links.items() if k[1] != parts[1]}
            return None
        if parts[0] == "agents" and method == "PUT":
            assert parts[3] in self.folders, f"no folder {parts[3]}"
            self.links[(parts[1], parts[3])] = {"agentId": parts[1], "folderId": parts[3], **body}
            return self.links[(parts[1], parts[3])]
        if parts[0] == "agents" and method == "DELETE":
            del self.links[(parts[1], parts[3])]
            return None
        if method == "POST" and path == "/jobs":
            assert body["folderId"] in self.folders, f"no folder {body['folderId']}"
            new = {"id": str(uuid.uuid4()), "status": "pending", **body}
            self.jobs[new["id"]] = new
            return new
        if parts[0] == "jobs" and parts[-1] == "cancel":
            self.jobs[parts[1]]["status"] = "cancelled"
            return self.jobs[parts[1]]
        raise AssertionError((method, path))


class LinkDesired(ChildModel):
    agent: str
    mode: Literal["read", "write"] = "read"


class FolderDesired(DesiredModel):
    name: str = Field(min_length=1)
    color: str | None = None
    token: str | None = None
    links: list[LinkDesired] | None = None


class FolderState(State):
    name: str
    color: str | None = None
    token: dict[str, str] = {}  # {"token": digest}: a sensitive map of one entry


class Folders(Kind):
    name = "folders"
    label = "folder"
    collection = "/folders"
    desired_model = FolderDesired
    children: ClassVar[dict[str, str]] = {"links": "folderLinks"}
    sensitive_fields = ("token",)

    async def read_live(self, read: LiveRead) -> list[LiveObject]:
        out = []
        for item in await read.api.list_all(self.collection):
            token = {"token": item["token"]} if "token" in item else {}
            state = FolderState(name=item["name"], color=item["color"], token=token)
            out.append(LiveObject(Key(item["name"]), item["id"], state, item))
        return out

    def sensitive_values(self, declared: list[Declared]) -> dict[str, str | Sensitive]:
        return {
            f"folders/{d.model.name}/token": d.model.token  # type: ignore[attr-defined]
            for d in declared
            if getattr(d.model, "token", None) is not None
        }

    def desired_state(
        self, declared: Declared, ctx: PlanContext, live: LiveObject | None
    ) -> State | None:
        model = declared.model
        assert isinstance(model, FolderDesired)
        fields: dict[str, Any] = {"name": model.name}
        if "color" in model.model_fields_set:
            fields["color"] = model.color
        if model.token is not None:  # the live id reaches the comparison
            fields["token"] = {"token": digest(live.id, model.token) if live else "new"}
        return FolderState(**fields)

    def _body(self, state: State, names: set[str]) -> dict[str, Any]:
        assert isinstance(state, FolderState)
        body = state.model_dump(include=names - {"token"})
        if "token" in names:
            body["token"] = sensitive_value(f"folders/{state.name}/token")
        return body

    def create_calls(self, desired: State) -> list[ApiCall]:
        body = self._body(desired, set(desired.model_fields_set))
        return [ApiCall(method="POST", path=self.collection, body=body, creates=True)]

    def update_calls(self, live: LiveObject, desired: State, changed: set[str]) -> list[ApiCall]:
        return [
            ApiCall(method="PATCH", path=f"/folders/{live.id}", body=self._body(desired, changed))
        ]


class LinkState(State):
    agent: str
    folder: str
    agentId: str
    folderId: str
    mode: str = "read"


class FolderLinks(Kind):
    name = "folderLinks"
    label = "link"
    collection = "/agents"
    desired_model = LinkDesired
    parent = "folders"
    identity_fields = ("agent", "folder", "agentId", "folderId")
    key_references = ("agents",)

    def key_of(self, declared: Declared, references: References | None = None) -> Key:
        agent = declared.model.agent  # type: ignore[attr-defined]
        folder = declared.parent.model.name  # type: ignore[union-attr]
        return Key(references["agents"].canonical(agent) if references else agent, folder)

    def parent_key(self, key: Key) -> Key:
        return Key(key[1])

    async def read_live(self, read: LiveRead) -> list[LiveObject]:
        lists = [
            (f, await read.api.list_all(f"/folders/{f.id}/links")) for f in read.parents.values()
        ]
        if any(links for _, links in lists):
            await read.references.load(("agents",))
        agents = read.references["agents"]
        out = []
        for folder, links in lists:
            for link in links:
                agent = agents.name_of(link["agentId"])
                state = LinkState(
                    agent=agent,
                    folder=folder.key[0],
                    agentId=link["agentId"],
                    folderId=folder.id,
                    mode=link["mode"],
                )
                link_id = f"{link['agentId']}:{folder.id}"
                out.append(LiveObject(Key(agent, folder.key[0]), link_id, state, link))
        return out

    def desired_state(
        self, declared: Declared, ctx: PlanContext, live: LiveObject | None
    ) -> State | None:
        model = declared.model
        assert isinstance(model, LinkDesired) and declared.parent is not None
        agent_id = ctx.references["agents"].resolve(model.agent)
        if agent_id is None:
            ctx.diagnostics.error(f"no agent named '{model.agent}'", declared.position)
            return None
        folder = declared.parent.model.name  # type: ignore[attr-defined]
        folder_id = ctx.id_of("folders", Key(folder))
        assert folder_id is not None
        agent = ctx.references["agents"].name_of(agent_id)
        fields = {"agent": agent, "folder": folder, "agentId": agent_id, "folderId": folder_id}
        if "mode" in model.model_fields_set:
            fields["mode"] = model.mode
        return LinkState(**fields)

    def show(self, state: State, ctx: PlanContext) -> dict[str, Any]:
        shown = super().show(state, ctx)
        return {k: v for k, v in shown.items() if k not in ("agentId", "folderId")}

    def create_calls(self, desired: State) -> list[ApiCall]:
        assert isinstance(desired, LinkState)
        path = f"/agents/{desired.agentId}/links/{desired.folderId}"
        return [ApiCall(method="PUT", path=path, body={"mode": desired.mode})]

    def update_calls(self, live: LiveObject, desired: State, changed: set[str]) -> list[ApiCall]:
        return self.create_calls(desired)

    def delete_calls(self, live: LiveObject) -> list[ApiCall]:
        assert isinstance(live.state, LinkState)
        path = f"/agents/{live.state.agentId}/links/{live.state.folderId}"
        return [ApiCall(method="DELETE", path=path)]


class JobDesired(DesiredModel):
    name: str
    agent: str
    folder: str
    size: int = 1


class JobState(State):
    agent: str
    name: str
    agentId: str
    folderId: str
    size: int = 1


class Jobs(Kind):
    name = "jobs"
    label = "job"
    collection = "/jobs"
    desired_model = JobDesired
    depends_on = ("folders",)
    identity_fields = ("agent", "name", "agentId")
    key_references = ("agents",)

    def key_of(self, declared: Declared, references: References | None = None) -> Key:
        model = declared.model
        assert isinstance(model, JobDesired)
        agent = references["agents"].canonical(model.agent) if references else model.agent
        return Key(agent, model.name)

    async def find_created(self, api: Any, key: Key, body: Any) -> Any:
        items = await api.list_all(self.collection, {"searchName": key[1]})
        return next(
            (
                i
                for i in items
                if i["name"] == key[1] and i["agentId"] == body["agentId"]
                if i["status"] != "cancelled"
            ),
            None,
        )

    async def read_live(self, read: LiveRead) -> list[LiveObject]:
        items = [i for i in await read.api.list_all(self.collection) if i["status"] != "cancelled"]
        if items:
            await read.references.load(("agents",))
        agents = read.references["agents"]
        out = []
        for item in items:
            agent = agents.name_of(item["agentId"])
            state = JobState(
                agent=agent,
                name=item["name"],
                agentId=item["agentId"],
                folderId=item["folderId"],
                size=item["size"],
            )
            out.append(LiveObject(Key(agent, item["name"]), item["id"], state, item))
        return out

    def desired_state(
        self, declared: Declared, ctx: PlanContext, live: LiveObject | None
    ) -> State | None:
        model = declared.model
        assert isinstance(model, JobDesired)
        agent_id = ctx.references["agents"].resolve(model.agent)
        folder_id = ctx.resolve("folders", model.folder)
        if agent_id is None:
            ctx.diagnostics.error(f"no agent named '{model.agent}'", declared.position)
        if folder_id is None:
            ctx.diagnostics.error(
                f"job {model.name}: no folder named '{model.folder}'"
                + ctx.suggest("folders", model.folder),
                declared.position,
            )
        if agent_id is None or folder_id is None:
            return None
        return JobState(
            agent=ctx.references["agents"].name_of(agent_id),
            name=model.name,
            agentId=agent_id,
            folderId=folder_id,
            size=model.size,
        )

    def display(self, field: str, value: Any, ctx: PlanContext) -> Any:
        if field == "folderId":
            return ctx.name_of("folders", value)
        return super().display(field, value, ctx)

    def show(self, state: State, ctx: PlanContext) -> dict[str, Any]:
        shown = super().show(state, ctx)
        return {k: v for k, v in shown.items() if k != "agentId"}

    def decide_update(
        self, live: LiveObject, desired: State, changes: list[FieldChange], ctx: PlanContext
    ) -> Decision:
        status = live.raw["status"]
        if status == "pending":
            calls = (*self.delete_calls(live), *self.create_calls(desired))
            return Decision("replace", "pending job differs: cancelled, then created", calls)
        return Decision(None, f"{status}: left alone", warning=f"the job is {status}")

    def decide_delete(self, live: LiveObject, reason: str, ctx: PlanContext) -> Decision:
        return Decision("cancel", reason, tuple(self.delete_calls(live)))

    def create_calls(self, desired: State) -> list[ApiCall]:
        body = desired.model_dump(include={"name", "agentId", "folderId", "size"})
        return [ApiCall(method="POST", path=self.collection, body=body, creates=True)]

    def update_calls(self, live: LiveObject, desired: State, changed: set[str]) -> list[ApiCall]:
        raise AssertionError("jobs are replaced, never updated")

    def delete_calls(self, live: LiveObject) -> list[ApiCall]:
        return [ApiCall(method="POST", path=f"/jobs/{live.id}/cancel")]


CONTRACT_KINDS: list[type[Kind]] = [Folders, FolderLinks, Jobs]
for _kind in CONTRACT_KINDS:  # registered only while a test asks for them
    Kind.registry.pop(_kind.name, None)
