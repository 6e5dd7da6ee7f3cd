"""The exception tree maps each branch to its documented exit code."""

from __future__ import annotations

from pplx_archiver import errors


def test_exit_codes() -> None:
    """Each error family has the exit code the README documents."""
    assert errors.exit_code_for(errors.ConfigError("x")) == 2
    assert errors.exit_code_for(errors.LoggedOutError("x")) == 3
    assert errors.exit_code_for(errors.SessionExpiredError("x")) == 3
    assert errors.exit_code_for(errors.InterruptedRun("x")) == 4
    assert errors.exit_code_for(errors.ChallengeAbort("x")) == 5
    assert errors.exit_code_for(errors.TransientError("x")) == 1
    assert errors.exit_code_for(KeyboardInterrupt()) == 4
    assert errors.exit_code_for(RuntimeError()) == 1


def test_payload_error_names_path() -> None:
    """PayloadError carries the JSON path in its message."""
    exc = errors.PayloadError("entries[3].blocks[1]", "expected an object")
    assert exc.path == "entries[3].blocks[1]"
    assert "entries[3].blocks[1]" in str(exc)


def test_ask_exit_codes() -> None:
    """The in-band errors of pplx-ask have their own codes 10-15."""
    assert errors.exit_code_for(errors.AskRateLimitedError("x")) == 10
    assert errors.exit_code_for(errors.AskFailedError("x")) == 11
    assert errors.exit_code_for(errors.ClarifyingQuestionsError("x")) == 12
    assert errors.exit_code_for(errors.AskSessionError("x")) == 13
    assert errors.exit_code_for(errors.AskTimeoutError("x")) == 14
    assert errors.exit_code_for(errors.AskIncompleteError("x")) == 15
