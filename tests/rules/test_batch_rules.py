"""The batch rules (docs/service/contract.md#execution-batches) as pure functions:
request types, status machine, schedule."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone
from typing import Annotated

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict, ValidationError

from agentform.core.problems import RuleViolation
from agentform.rules.batch_schedule import (
    due_indexes,
    next_release_at,
    released_count,
    shift_origin,
)
from agentform.rules.batch_statuses import (
    ALL_BATCH_EDGES,
    BATCH_ACTIONS,
    BATCH_EDGES,
    BATCH_STATUSES,
    COUNTER_OF_ITEM_STATUS,
    COUNTERS,
    FINAL_STATUSES,
    ITEM_EDGES,
    ITEM_STATUSES,
    UNSETTLED_ITEM_STATUSES,
    TransitionRefused,
    next_status,
)
from agentform.rules.batches import (
    ITEMS_LENGTH,
    MAX_PROBLEMS_SHOWN,
    BatchConfig,
    BatchName,
    StartAt,
    check_items,
    parse_items,
)
from agentform.rules.execute import AgentVersions

T0 = datetime(2026, 12, 1, 2, 0, tzinfo=UTC)


class Spec(BaseModel):
    """A request built from the shared types, as either half builds its own."""

    model_config = ConfigDict(extra="forbid", strict=True)
    name: BatchName
    startAt: StartAt
    config: BatchConfig
    items: Annotated[list[dict[str, object]], ITEMS_LENGTH]


def spec(**changes: object) -> dict[str, object]:
    body: dict[str, object] = {
        "name": "nightly",
        "startAt": "2026-12-01T02:00:00Z",
        "config": {"type": "timeBatching", "batchSize": 10, "batchInterval": 60},
        "items": [{}],
    }
    body.update(changes)
    return body


def error_of(body: dict[str, object]) -> tuple[tuple[object, ...], str]:
    with pytest.raises(ValidationError) as caught:
        Spec.model_validate(body)
    errors = caught.value.errors()
    assert len(errors) == 1, errors
    return errors[0]["loc"], errors[0]["msg"]


# -- config -------------------------------------------------------------------


def test_a_valid_request_parses() -> None:
    parsed = Spec.model_validate(spec())
    assert parsed.config == BatchConfig(type="timeBatching", batchSize=10, batchInterval=60)
    assert parsed.startAt == T0


@pytest.mark.parametrize(
    ("config", "field"),
    [
        ({"type": "countBatching", "batchSize": 10, "batchInterval": 60}, "type"),
        ({"batchSize": 10, "batchInterval": 60}, "type"),
        ({"type": "timeBatching", "batchSize": 0, "batchInterval": 60}, "batchSize"),
        ({"type": "timeBatching", "batchSize": 1001, "batchInterval": 60}, "batchSize"),
        ({"type": "timeBatching", "batchSize": "10", "batchInterval": 60}, "batchSize"),
        ({"type": "timeBatching", "batchSize": True, "batchInterval": 60}, "batchSize"),
        ({"type": "timeBatching", "batchSize": 10, "batchInterval": 0}, "batchInterval"),
        ({"type": "timeBatching", "batchSize": 10, "batchInterval": 86_401}, "batchInterval"),
        ({"type": "timeBatching", "batchSize": 10, "batchInterval": 1.5}, "batchInterval"),
        ({"type": "timeBatching", "batchSize": 10, "batchInterval": 60, "every": 1}, "every"),
    ],
)
def test_config_rules(config: dict[str, object], field: str) -> None:
    loc, _ = error_of(spec(config=config))
    assert loc == ("config", field)


@pytest.mark.parametrize(("size", "interval"), [(1, 1), (1000, 86_400)])
def test_config_bounds_are_inclusive(size: int, interval: int) -> None:
    config = {"type": "timeBatching", "batchSize": size, "batchInterval": interval}
    assert Spec.model_validate(spec(config=config)).config.batchSize == size


# -- name, items, startAt -----------------------------------------------------


@pytest.mark.parametrize("name", ["", "x" * 201])
def test_name_is_1_to_200(name: str) -> None:
    assert error_of(spec(name=name))[0] == ("name",)


def test_name_of_200_and_non_ascii_is_fine() -> None:
    assert Spec.model_validate(spec(name="é" * 200)).name == "é" * 200


@pytest.mark.parametrize("count", [0, 10_001])
def test_items_are_1_to_10000(count: int) -> None:
    assert error_of(spec(items=[{}] * count))[0] == ("items",)


def test_ten_thousand_items_are_fine() -> None:
    assert len(Spec.model_validate(spec(items=[{}] * 10_000)).items) == 10_000


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2026-12-01T02:00:00Z", T0),
        ("2026-12-01T03:00:00+01:00", T0),
        ("2026-12-01T02:00:00.250000Z", T0 + timedelta(milliseconds=250)),
        (
            datetime(2026, 12, 1, 2, 0, tzinfo=timezone(timedelta(hours=-5))),
            T0 + timedelta(hours=5),
        ),
    ],
)
def test_start_at_is_normalised_to_utc(value: object, expected: datetime) -> None:
    parsed = Spec.model_validate(spec(startAt=value)).startAt
    assert parsed == expected
    assert parsed.tzinfo is UTC


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("2026-12-01T02:00:00", "time zone"),
        ("tomorrow", "not an ISO 8601"),
        ("", "not an ISO 8601"),
        (date(2026, 12, 1), "date alone"),
        (1_700_000_000, "string"),
        (datetime(2026, 12, 1, 2, 0), "time zone"),
    ],
)
def test_start_at_refusals_say_why(value: object, says: str) -> None:
    loc, msg = error_of(spec(startAt=value))
    assert loc == ("startAt",)
    assert says in msg


def test_json_schema_of_the_types() -> None:
    schema = Spec.model_json_schema()
    assert schema["properties"]["startAt"]["format"] == "date-time"
    config = schema["$defs"]["BatchConfig"]["properties"]
    assert config["batchSize"]["maximum"] == 1000
    assert config["batchInterval"]["maximum"] == 86_400
    assert schema["properties"]["items"]["maxItems"] == 10_000


# -- the status machine -------------------------------------------------------

EXPECTED_EDGES = {
    ("pending", "running"),
    ("pending", "paused"),
    ("running", "paused"),
    ("paused", "running"),
    ("paused", "pending"),
    ("pending", "cancelled"),
    ("running", "cancelled"),
    ("paused", "cancelled"),
    ("running", "completed"),
}


def test_the_edges_are_those_of_api_md_10() -> None:
    assert set(ALL_BATCH_EDGES) == EXPECTED_EDGES
    assert set(BATCH_EDGES) == set(BATCH_ACTIONS)


@pytest.mark.parametrize(
    ("status", "action", "start_due", "expected"),
    [
        ("pending", "start", True, "running"),
        ("pending", "pause", True, "paused"),
        ("running", "pause", True, "paused"),
        ("paused", "resume", True, "running"),
        ("paused", "resume", False, "pending"),
        ("pending", "cancel", True, "cancelled"),
        ("running", "cancel", True, "cancelled"),
        ("paused", "cancel", True, "cancelled"),
        ("running", "complete", True, "completed"),
    ],
)
def test_each_allowed_move(status: str, action: str, start_due: bool, expected: str) -> None:
    assert next_status(status, action, start_due=start_due) == expected  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("status", "action"),
    [
        ("paused", "pause"),
        ("pending", "resume"),
        ("running", "resume"),
        ("pending", "complete"),
        ("paused", "complete"),
        ("running", "start"),
        *[(final, action) for final in ("completed", "cancelled") for action in BATCH_ACTIONS],
    ],
)
def test_each_refused_move(status: str, action: str) -> None:
    with pytest.raises(TransitionRefused, match=f"cannot {action} a batch that is {status}"):
        next_status(status, action)  # type: ignore[arg-type]


@given(
    st.lists(st.tuples(st.sampled_from(BATCH_ACTIONS), st.booleans()), max_size=30),
)
def test_any_sequence_of_actions_moves_only_along_edges(
    actions: list[tuple[str, bool]],
) -> None:
    status = "pending"
    for action, start_due in actions:
        try:
            after = next_status(status, action, start_due=start_due)  # type: ignore[arg-type]
        except TransitionRefused:
            # Refused exactly when the table has no edge for this action from here.
            assert not any(frm == status for frm, _ in BATCH_EDGES[action])  # type: ignore[index]
            continue
        assert (status, after) in BATCH_EDGES[action]  # type: ignore[index]
        assert status not in FINAL_STATUSES
        status = after
    assert status in BATCH_STATUSES


def test_final_statuses_have_no_way_out_and_every_other_can_be_cancelled() -> None:
    assert not [edge for edge in ALL_BATCH_EDGES if edge[0] in FINAL_STATUSES]
    for status in set(BATCH_STATUSES) - FINAL_STATUSES:
        assert next_status(status, "cancel") == "cancelled"


# -- items --------------------------------------------------------------------


def test_every_item_status_has_one_counter_and_every_counter_a_status() -> None:
    assert set(COUNTER_OF_ITEM_STATUS) == set(ITEM_STATUSES)
    assert set(COUNTER_OF_ITEM_STATUS.values()) == set(COUNTERS)


def test_item_edges_end_only_in_known_statuses_and_final_ones_stay() -> None:
    settled = set(ITEM_STATUSES) - UNSETTLED_ITEM_STATUSES
    assert settled == {"triggered", "cancelled", "failed"}
    assert not [edge for edge in ITEM_EDGES if edge[0] in settled]
    # Every unsettled item can be cancelled or triggered.
    for status in UNSETTLED_ITEM_STATUSES:
        assert (status, "cancelled") in ITEM_EDGES
        assert (status, "triggered") in ITEM_EDGES


# -- the schedule -------------------------------------------------------------

TEN_A_MINUTE = BatchConfig(type="timeBatching", batchSize=10, batchInterval=60)


@pytest.mark.parametrize(
    ("seconds", "due"),
    [(-1, 0), (0, 10), (59, 10), (60, 20), (119.999, 20), (120, 25), (10_000, 25)],
)
def test_released_count_25_items_10_a_minute(seconds: float, due: int) -> None:
    at = T0 + timedelta(seconds=seconds)
    assert released_count(TEN_A_MINUTE, 25, T0, at) == due
    assert due_indexes(TEN_A_MINUTE, 25, T0, at) == range(due)


@pytest.mark.parametrize(
    ("seconds", "next_in"),
    [(-30, 0), (0, 60), (59, 60), (60, 120), (120, None)],
)
def test_next_release(seconds: int, next_in: int | None) -> None:
    expected = None if next_in is None else T0 + timedelta(seconds=next_in)
    assert next_release_at(TEN_A_MINUTE, 25, T0, T0 + timedelta(seconds=seconds)) == expected


configs = st.builds(
    BatchConfig,
    type=st.just("timeBatching"),
    batchSize=st.integers(1, 1000),
    batchInterval=st.integers(1, 86_400),
)
offsets = st.integers(-200_000, 10_000_000).map(lambda s: timedelta(seconds=s))


@given(configs, st.integers(1, 10_000), offsets, offsets)
def test_released_count_is_monotonic_bounded_and_slice_aligned(
    config: BatchConfig, total: int, a: timedelta, b: timedelta
) -> None:
    early, late = sorted((T0 + a, T0 + b))
    n_early = released_count(config, total, T0, early)
    n_late = released_count(config, total, T0, late)
    assert 0 <= n_early <= n_late <= total
    assert n_late == total or n_late % config.batchSize == 0
    # Nothing falls due between `early` and the next release time.
    nxt = next_release_at(config, total, T0, early)
    if nxt is None:
        assert n_early == total
    else:
        assert nxt > early
        assert released_count(config, total, T0, nxt - timedelta(microseconds=1)) == n_early
        assert released_count(config, total, T0, nxt) > n_early


@given(configs, st.integers(1, 10_000), offsets, offsets, st.integers(0, 1_000_000))
def test_a_pause_releases_nothing_and_keeps_the_spacing(
    config: BatchConfig, total: int, paused: timedelta, after: timedelta, held: int
) -> None:
    paused_at = T0 + paused
    resumed_at = paused_at + timedelta(seconds=held)
    origin = shift_origin(T0, paused_at, resumed_at)
    at_pause = released_count(config, total, T0, paused_at)
    if paused_at >= T0:
        # What was due at the pause is due at the resume, and no more.
        assert released_count(config, total, origin, resumed_at) == at_pause
    else:
        # Paused before the start: the start is the later of startAt and the resume.
        assert origin == max(T0, resumed_at)
    # After the resume the schedule is the old one, moved on by the time paused.
    later = resumed_at + abs(after)
    assert released_count(config, total, origin, later) == released_count(
        config, total, T0, later - (origin - T0)
    )


# -- items: the execute rules, each problem naming its item ---------------------

POOL = "0b0f7a50-0000-4000-8000-000000000001"
OTHER_POOL = "0b0f7a50-0000-4000-8000-000000000002"


class CountingLookup:
    """An organization with one pool, counting how often it is asked."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def profile_exists(self, profile_id: str) -> bool:
        self.asked.append(profile_id)
        return False

    def pool_exists(self, pool_id: str) -> bool:
        self.asked.append(pool_id)
        return pool_id == POOL

    def staged_file_name(self, file_id: str) -> str | None:
        self.asked.append(file_id)
        return None


AGENT = AgentVersions(versions=[1, 2], published_version=2)


def problems_of(fn: object, *args: object) -> list[tuple[str, str]]:
    with pytest.raises(RuleViolation) as caught:
        fn(*args)  # type: ignore[operator]
    return [(p.parameter, p.detail) for p in caught.value.problems]


def test_parse_items_names_every_item_at_fault() -> None:
    problems = problems_of(
        parse_items,
        [{}, {"version": "2"}, {"inputs": {"a": 1}}, {"colour": "red"}, "not an object"],
    )
    assert [p for p, _ in problems] == [
        "items[1].version",
        "items[3].colour",
        "items[4]",
    ]
    assert problems[1][1] == "unknown field"  # items[3].colour names it


def test_parse_items_keeps_the_request_as_sent() -> None:
    parsed = parse_items([{"inputs": {"order": "A-1"}, "metadata": {"team": "pay"}}])
    assert parsed[0].as_sent() == {"inputs": {"order": "A-1"}, "metadata": {"team": "pay"}}


@pytest.mark.parametrize("value", ["queue", "reject"])
def test_a_batch_item_does_not_say_on_capacity_limit(value: str) -> None:
    problems = problems_of(parse_items, [{}, {"onCapacityLimit": value}])
    assert problems[0][0] == "items[1].onCapacityLimit"
    assert "waits for capacity" in problems[0][1]


def test_check_items_uses_the_execute_rules_with_the_item_prefix() -> None:
    items = parse_items(
        [
            {"agentProfilePoolId": POOL},
            {"agentProfilePoolId": OTHER_POOL},
            {"version": 3},
            {"agentProfilePoolId": POOL, "agentProfileId": POOL},
        ]
        + [{"agentProfilePoolId": POOL}] * 50
    )
    lookup = CountingLookup()
    problems = problems_of(check_items, items, AGENT, lookup)
    assert [p for p, _ in problems] == [
        "items[1].agentProfilePoolId",
        "items[2].version",
        "items[3].agentProfilePoolId",
    ]
    assert "no agent profile pool" in problems[0][1]
    # 51 items name the same pool: the organization is asked once per id.
    assert sorted(lookup.asked) == sorted([POOL, OTHER_POOL])


def test_check_items_passes_valid_items() -> None:
    check_items(parse_items([{"agentProfilePoolId": POOL, "version": 1}]), AGENT, CountingLookup())


def test_thousands_of_bad_items_give_a_bounded_answer() -> None:
    problems = problems_of(parse_items, [{"version": "x"}] * 10_000)
    assert len(problems) == MAX_PROBLEMS_SHOWN + 1
    assert problems[-1] == ("items", f"and {10_000 - MAX_PROBLEMS_SHOWN} more problems")
