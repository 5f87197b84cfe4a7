"""The development switch travels from ``kb serve --dev-allow-loopback PORT`` through the
composition root to every outbound call, and nowhere else: not from the environment, not
in the AWS wiring."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest

import knowledge.embedded.server as server_module
from knowledge.crawl.outbound import PRODUCTION, OutboundPolicy
from knowledge.embedded.cli import build_parser, main
from knowledge.model import BotSettings
from knowledge.settings import LocalSettings
from knowledge.wiring import build_aws_services, build_local_services
from tests.lambda_support import function_env


class _Server:
    """Stands in for the HTTP server: keeps the services ``kb serve`` built and returns."""

    built: ClassVar[list[Any]] = []

    def __init__(self, services: Any, host: str, port: int, **options: Any):
        type(self).built.append(services)
        self.port = port

    def serve_forever(self) -> None:
        return

    def stop(self) -> None:
        return


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    _Server.built = []
    monkeypatch.setattr(server_module, "EmbeddedServer", _Server)
    return _Server.built


def test_kb_serve_is_production_unless_the_flag_is_given(
    tmp_path: Any, served: list[Any], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KB_TEST_ALLOW_LOOPBACK", "1")  # the retired variable changes nothing
    assert main(["--data", str(tmp_path / "d"), "serve", "--port", "0"]) == 0
    assert served[-1].outbound.loopback_port is None
    assert "DEVELOPMENT" not in capsys.readouterr().err

    assert main(["--data", str(tmp_path / "d"), "serve", "--port", "0", "--dev-allow-loopback", "8765"]) == 0
    assert served[-1].outbound == OutboundPolicy(loopback_port=8765)
    err = capsys.readouterr().err
    assert "WARNING: DEVELOPMENT SWITCH ON" in err and "127.0.0.1:8765" in err and "localhost:8765" in err


@pytest.mark.parametrize("port", ["0", "65536", "-1", "http", ""])
def test_the_flag_takes_one_valid_port(port: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["serve", "--dev-allow-loopback", port])
    assert "PORT must be a number from 1 to 65535" in capsys.readouterr().err


def test_local_services_carry_the_policy_to_the_embedder(tmp_path: Any) -> None:
    base = "http://127.0.0.1:8765/v1"  # what a local OpenAI-compatible server looks like
    for settings, works in ((LocalSettings(tmp_path / "prod"), False),
                            (LocalSettings(tmp_path / "dev", dev_loopback_port=8765), True),
                            (LocalSettings(tmp_path / "other", dev_loopback_port=8766), False)):
        services = build_local_services(settings)
        assert services.outbound.loopback_port == settings.dev_loopback_port
        services.state.put_bot(BotSettings(bot="b", embedder="openai",
                                           embedder_options={"baseUrl": base, "apiKey": "k", "dimensions": 4}))
        if works:
            embedder = services.embedder_for("b")
            assert embedder is not None and embedder.policy is services.outbound  # type: ignore[attr-defined]
        else:
            with pytest.raises(ValueError, match="invalid_config"):
                services.embedder_for("b")


def test_aws_services_never_relax_the_policy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KB_TEST_ALLOW_LOOPBACK", "1")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "test")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "test")
    services = build_aws_services({"AWS_REGION": "eu-west-1", **function_env()}, embedder=False, eager=())
    assert services.outbound is PRODUCTION
    assert services.outbound.loopback_port is None


def test_kb_serve_stops_at_start_on_an_embedder_url_it_may_not_call(
    tmp_path: Any, served: list[Any], capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "d"
    services = build_local_services(LocalSettings(data))
    for bot, base in (("meta", "https://169.254.169.254/v1"), ("plain", "http://127.0.0.1:8765/v1")):
        services.state.put_bot(BotSettings(bot=bot, embedder="openai",
                                           embedder_options={"baseUrl": base, "apiKey": "k"}))
    assert main(["--data", str(data), "serve", "--port", "0"]) == 2
    err = capsys.readouterr().err
    assert "the openai embedder's baseUrl is refused" in err and served == []
    services.state.put_bot(BotSettings(bot="meta"))
    # plain http to loopback is what the development switch is for, on its port only
    assert main(["--data", str(data), "serve", "--port", "0", "--dev-allow-loopback", "8766"]) == 2
    assert served == []
    assert main(["--data", str(data), "serve", "--port", "0", "--dev-allow-loopback", "8765"]) == 0
    assert served[-1].outbound.loopback_port == 8765
