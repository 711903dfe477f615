import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--runs",
        type=int,
        default=None,
        help="hypothesis examples per generated-run test (CI default: a fixed small number)",
    )


@pytest.fixture(scope="session")
def hypothesis_runs(request: pytest.FixtureRequest) -> int:
    return request.config.getoption("--runs") or 10
