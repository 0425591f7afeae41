"""How the service meets HTTP: the key and the body limits of every operation
(auth, gate), list parameters (paging), rate limiting, the OpenAPI document,
the uvicorn server and the in-process transport of `endpoint: local`."""
