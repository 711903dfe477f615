"""``txconform probe``: real clients against a real Kafka-protocol broker, recorded and checked (probe/)."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from rich.console import Console

from spark_replay.command import on_spark, print_report
from trace_check.errors import TxconformError

SCENARIOS = ("zombie", "kill", "open", "ctp", "kafka-python", "java")


def add_parsers(sub: Any) -> None:
    p = sub.add_parser(
        "probe",
        help="drive a real Kafka-protocol broker with real transactional clients, record it, and check it",
        description="Start a broker (Apache Kafka from Maven Central, librdkafka's mock cluster or Tansu), or use a running one (--bootstrap), run a seeded "
        "plan of transactional producers, a zombie, a producer process killed mid-transaction, a transaction left open, and "
        "read_committed / read_uncommitted consumers with confluent-kafka; read the log back with raw Fetch requests "
        "(kafka-python's protocol classes); write it all to DIR/probe.jsonl and run the replay checks on it "
        "(docs/probe.md). Exit status: 0 no anomaly, 1 anomalies, 2 bad arguments or a target that did not start.",
    )
    p.add_argument(
        "--target",
        default="mock",
        metavar="NAME",
        help="the broker the probe starts and stops: mock, tansu, kafka (Apache Kafka, the newest version tested) or kafka:VERSION "
        "(any 4.x Maven Central serves, e.g. kafka:4.1.0) (default mock); cassandra[:VERSION] (Apache Cassandra 5.0.x, for C*One: "
        "with --hold only)",
    )
    p.add_argument(
        "--nodes", type=int, choices=(1, 3), default=1, metavar="N", help="cassandra: nodes on 127.0.0.1 (and 127.0.0.2, 127.0.0.3), 1 or 3 (default 1)"
    )
    p.add_argument(
        "--transaction-version",
        type=int,
        choices=(1, 2),
        default=None,
        metavar="N",
        help="kafka: format the cluster with transaction.version=N (1: KIP-98's protocol, 2: KIP-890's; default: the broker's, 2 on 4.x)",
    )
    p.add_argument("--brokers", type=int, choices=(1, 3), default=1, metavar="N", help="kafka: KRaft nodes, 1 or 3 (default 1)")
    p.add_argument(
        "--faults",
        default=None,
        metavar="LIST",
        help="kafka --brokers 3: faults applied one at a time while the producers run, of kill-coordinator,kill-leader,"
        "pause-coordinator,pause-leader (SIGKILL then a restart, or SIGSTOP then SIGCONT, 4 s each)",
    )
    p.add_argument(
        "--race",
        default=None,
        metavar="NAME",
        help="kafka: instead of the workload, run a known bug's race with raw requests: kafka-19690 (fixed in 4.1.1: "
        "try kafka:4.1.0 against kafka:4.1.1); exit 1 if a trial shows the bug",
    )
    p.add_argument("--trials", type=_count(1, 1000), default=10, metavar="N", help="--race: trials (default 10)")
    p.add_argument("--keep-data", action="store_true", help="kafka: keep the brokers' data folders (segments, __transaction_state) under DIR")
    p.add_argument(
        "--hold",
        action="store_true",
        help="start the target, print its bootstrap address and keep it running until interrupted (no workload): point your own clients at it",
    )
    p.add_argument("--bootstrap", default=None, metavar="HOST:PORT", help="a running cluster instead: not started or stopped by the probe")
    p.add_argument("--seed", type=int, default=0, metavar="S", help="the plan's seed (default 0)")
    p.add_argument("--producers", type=_count(1, 32), default=2, metavar="N", help="concurrent transactional producers (default 2)")
    p.add_argument("--txns", type=_count(1, 10_000), default=8, metavar="N", help="transactions per producer (default 8)")
    p.add_argument("--partitions", type=_count(1, 64), default=3, metavar="N", help="partitions of the probe's topic (default 3)")
    p.add_argument("--records", type=_count(1, 1000), default=3, metavar="N", help="at most N records per partition per transaction (default 3)")
    p.add_argument("--scenarios", default=",".join(SCENARIOS), metavar="LIST", help=f"of {','.join(SCENARIOS)} (default all; '' for none)")
    p.add_argument("--seconds", type=float, default=60.0, metavar="S", help="the workload's deadline (default 60)")
    p.add_argument("--out", type=Path, default=None, metavar="DIR", help="where the record goes (default out/probe-TARGET-SEED)")
    p.add_argument("--force", action="store_true", help="replace DIR if an earlier probe wrote it")
    p.add_argument("--no-check", action="store_true", help="record only; check later with: txconform replay DIR")
    p.add_argument("--master", default=None, metavar="URL", help="Spark master for the checks (default local[*])")
    p.add_argument(
        "--from",
        dest="recorded",
        type=Path,
        default=None,
        metavar="DIR",
        help="check a recorded probe (DIR/probe.jsonl) again, without a target: the same summary, checks and findings",
    )
    p.set_defaults(func=cmd_probe)


def _count(low: int, high: int) -> Any:
    def parse(text: str) -> int:
        try:
            n = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if not low <= n <= high:
            raise argparse.ArgumentTypeError(f"{n} is not between {low} and {high}")
        return n

    return parse


def _scenarios(text: str) -> tuple[str, ...]:
    chosen = tuple(s.strip() for s in text.split(",") if s.strip())
    unknown = [s for s in chosen if s not in SCENARIOS]
    if unknown:
        raise TxconformError(f"--scenarios {unknown[0]}: no such scenario; choose from {','.join(SCENARIOS)}")
    return chosen


def target_spec(args: argparse.Namespace) -> Any:
    """The target the arguments name (probe.run.TargetSpec); a one-line error for a bad one."""
    from probe.kafka import parse_target
    from probe.run import TargetSpec
    from probe.targets import parse_bootstrap

    if args.bootstrap:
        return TargetSpec(bootstrap=parse_bootstrap(args.bootstrap))
    name, version = parse_target(args.target)
    if name not in ("mock", "tansu", "kafka"):
        raise TxconformError(
            f"--target {args.target}: no such target; the targets are mock, tansu, kafka[:VERSION] and cassandra[:VERSION] (with --hold), "
            "or give --bootstrap HOST:PORT"
        )
    if name != "kafka":
        kafka_only = (
            ("--transaction-version", args.transaction_version),
            ("--brokers 3", args.brokers != 1),
            ("--keep-data", args.keep_data),
            ("--faults", args.faults),
            ("--race", args.race),
        )
        used = [flag for flag, on in kafka_only if on]
        if used:
            raise TxconformError(f"{used[0]} is for --target kafka only; drop it, or use --target kafka")
    if args.faults and args.brokers != 3:
        raise TxconformError("--faults needs --brokers 3: a fault takes one node away, and the other two keep the cluster up")
    return TargetSpec(name, version, args.transaction_version, args.brokers, args.keep_data)


def _held(stop: Any, exited: Any) -> None:
    """Wait until ``stop`` (a threading.Event: SIGTERM) is set or Ctrl-C; a one-line error if
    ``exited()`` says a held process ended meanwhile."""
    try:
        while not stop.wait(1.0):
            why = exited()
            if why:
                raise TxconformError(why)
    except KeyboardInterrupt:
        pass


def _exited(target: Any) -> str | None:
    if target.process is not None and target.process.poll() is not None:
        return f"{target.name} exited with code {target.process.returncode} while held; its log: {target.log}"
    return None


def _hold(spec: Any, directory: Path | None, out: Console, err: Console) -> int:
    """``--hold``: the target, up until interrupted; its address on stdout, first line."""
    import signal
    import threading

    from probe.run import start_target

    if spec.bootstrap:
        raise TxconformError("--hold starts a target: give --target, not --bootstrap")
    directory = directory or Path(tempfile.mkdtemp(prefix=f"txconform-hold-{spec.label}-"))
    err.print(f"probe: starting {spec.label}", markup=False)
    stop = threading.Event()
    previous = signal.signal(signal.SIGTERM, lambda *_: stop.set())
    target = start_target(spec, directory)
    try:
        out.print(target.bootstrap, markup=False, soft_wrap=True)
        err.print(f"probe: {target.version} at {target.bootstrap}, pid {target.pid}; its log: {target.log}; interrupt (Ctrl-C) to stop it", markup=False)
        _held(stop, lambda: _exited(target))
    finally:
        target.stop()
        signal.signal(signal.SIGTERM, previous)
    err.print(f"probe: {spec.label} stopped", markup=False)
    return 0


def _race(spec: Any, args: argparse.Namespace, out: Console, err: Console) -> int:
    """``--race NAME``: the race's trials on a node of ``spec``; DIR/race.jsonl, a line per trial."""
    from probe.races import RACES, run
    from probe.run import start_target

    race = RACES.get(args.race)
    if race is None:
        raise TxconformError(f"--race {args.race}: no such race; the races are {', '.join(RACES)}")
    if spec.bootstrap or spec.brokers != 1:
        raise TxconformError("--race runs on one node the probe starts: give --target kafka:VERSION, without --bootstrap or --brokers")
    directory: Path = args.out or Path("out") / f"race-{args.race}-{spec.label}"
    if directory.exists() and any(directory.iterdir()) and not args.force:
        raise TxconformError(f"{directory}: exists and is not empty; add --force to replace it or name a new one with --out (nothing was written)")
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True)
    err.print(f"probe: starting {spec.label} for the race {race.name} ({race.ticket})", markup=False)
    target = start_target(spec, directory)
    lines = []
    try:
        out.print(f"target: {target.version} at {target.bootstrap}", markup=False)

        def emit(line: dict[str, Any]) -> None:
            lines.append(line)
            out.print(f"  trial {line['trial']}: {line['outcome']} (A answered {', '.join(line['a_errors'])}; {line['requests']} requests)", markup=False)

        counts = run(race.name, target.bootstrap, args.trials, 4, emit)
    finally:
        target.stop()
    header = {"format": "txconform-race", "version": 1, "race": race.name, "ticket": race.ticket, "target_version": target.version}
    (directory / "race.jsonl").write_text("".join(json.dumps(x, sort_keys=True) + "\n" for x in [header, *lines]))
    summary = ", ".join(f"{counts[k]} {k}" for k in ("bug", "fenced", "other") if counts[k])
    out.print(f"race {race.name}: {summary} of {args.trials} trials; the record: {directory / 'race.jsonl'}", markup=False)
    if counts["bug"]:
        out.print(f"finding: {race.ticket} ({race.meaning}); fixed in {race.fixed_in}", markup=False)
        return 1
    return 0


def _command(args: argparse.Namespace, scenarios: tuple[str, ...]) -> str:
    words = ["txconform", "probe"]
    words += ["--bootstrap", args.bootstrap] if args.bootstrap else ["--target", args.target]
    if args.transaction_version is not None:
        words += ["--transaction-version", str(args.transaction_version)]
    if args.brokers != 1:
        words += ["--brokers", str(args.brokers)]
    if args.faults:
        words += ["--faults", args.faults]
    words += ["--seed", str(args.seed), "--producers", str(args.producers), "--txns", str(args.txns), "--partitions", str(args.partitions)]
    words += ["--records", str(args.records), "--scenarios", ",".join(scenarios)]
    return shlex.join(words)


def _hold_cassandra(args: argparse.Namespace, out: Console, err: Console) -> int:
    """``--target cassandra --hold``: Cassandra nodes up until interrupted (probe.cassandra); the
    contact points and native port on stdout, first line."""
    import signal
    import threading

    from probe.cassandra import CassandraError, hold_message, parse_target, start_cassandra

    version = parse_target(args.target)
    if not args.hold:
        raise TxconformError(f"--target {args.target} runs with --hold only: the probe's workload is Kafka's; C*One runs over it from Python (docs/cone.md)")
    if args.bootstrap or args.brokers != 1 or args.transaction_version is not None or args.faults or args.race or args.keep_data:
        raise TxconformError(f"--target {args.target}: of the target options only --nodes and --out apply")
    directory = args.out or Path(tempfile.mkdtemp(prefix="txconform-hold-cassandra-"))
    err.print(f"probe: starting Apache Cassandra {version}, {args.nodes} node{'s' if args.nodes > 1 else ''}", markup=False)
    stop = threading.Event()
    previous = signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        cluster = start_cassandra(directory, version, args.nodes)
    except CassandraError:
        signal.signal(signal.SIGTERM, previous)
        raise
    try:
        out.print(f"{','.join(cluster.contact_points)} {cluster.native_port}", markup=False, soft_wrap=True)
        err.print(f"probe: {hold_message(cluster)}; logs under {cluster.scratch}", markup=False)
        _held(stop, cluster.exited_why)
    finally:
        cluster.stop()
        signal.signal(signal.SIGTERM, previous)
    err.print(f"probe: {cluster.label} stopped", markup=False)
    return 0


def cmd_probe(args: argparse.Namespace, out: Console, err: Console) -> int:
    if args.target.partition(":")[0] == "cassandra":
        return _hold_cassandra(args, out, err)
    if args.nodes != 1:
        raise TxconformError("--nodes is for --target cassandra only; Kafka's is --brokers")
    try:
        import confluent_kafka  # noqa: F401
        import kafka  # noqa: F401

        from probe.run import record
        from probe.workload import make_plan
    except ImportError as e:
        raise TxconformError(f"probe needs the probe extra ({e.name} is missing): pip install 'txconform[probe]'") from None
    if args.recorded is not None:
        return _recheck(args.recorded, args.master, out, err)
    if args.seconds <= 0 or args.seconds > 3600:
        raise TxconformError(f"--seconds {args.seconds}: give a deadline between 1 and 3600 seconds")
    scenarios = _scenarios(args.scenarios)
    spec = target_spec(args)
    args.bootstrap = spec.bootstrap
    from probe.faults import parse as parse_faults

    faults = parse_faults(args.faults) if args.faults else ()
    if args.hold:
        return _hold(spec, args.out, out, err)
    if args.race:
        return _race(spec, args, out, err)
    name = spec.label
    directory: Path = args.out or Path("out") / f"probe-{name}-{args.seed}"
    if directory.exists() and (not directory.is_dir() or any(directory.iterdir())):
        if not (args.force and (directory / "probe.jsonl").is_file()):
            why = "add --force to replace it" if (directory / "probe.jsonl").is_file() else "name a new one with --out"
            raise TxconformError(f"{directory}: exists and is not an empty directory; {why} (nothing was written)")
        shutil.rmtree(directory)
    plan = make_plan(args.seed, partitions=args.partitions, producers=args.producers, txns=args.txns, records=args.records, scenarios=scenarios)
    command = _command(args, scenarios)
    err.print(f"probe: starting {name}", markup=False)
    rec = record(plan, spec, directory, command=command, seconds=args.seconds, faults=faults)
    print_summary(directory, out)
    for problem in rec.errors:
        out.print(f"  error: {problem}", markup=False)
    if args.bootstrap:
        topic = "deleted" if rec.topic_left is None else f"NOT deleted ({rec.topic_left}): delete {plan.topic} yourself"
        out.print(f"the cluster was left running; the probe's topic was {topic}", markup=False)
    else:
        topic = "deleted" if rec.topic_left is None else f"not deleted ({rec.topic_left}), and went with the target"
        out.print(f"the target was stopped; the probe's topic was {topic}", markup=False)
    out.print(f"record: {directory / 'probe.jsonl'}; the target's log: {directory / 'target.log'}", markup=False)
    own = _record_findings(directory)
    if args.no_check:
        print_findings(own, command, out)
        (directory / "report.json").write_text(
            json.dumps({"findings": own, "command": command, "checks": "not run (--no-check)"}, indent=1, default=str) + "\n"
        )
        out.print(f"check it with: txconform replay {directory}", markup=False)
        return 1 if own else 0
    return _check_and_report(directory, own, command, args.master, out, err)


def _record_findings(directory: Path) -> list[dict[str, Any]]:
    from probe.findings import record_findings

    return record_findings(directory / "probe.jsonl")


def _check_and_report(directory: Path, own: list[dict[str, Any]], command: str, master: str | None, out: Console, err: Console, write: bool = True) -> int:
    """Run the checks, print them and the findings; ``write``: keep the violations (DIR/replay) and
    the report (DIR/report.json) next to the record."""
    report = check(directory, master, err, keep=write)
    print_report(report, out)
    found = print_findings(own + findings_of(report), command, out)
    verdict = f"{len(found)} kind(s) of anomaly found" if found else "no anomaly"
    if write:
        (directory / "report.json").write_text(json.dumps({**report.to_json(), "findings": found, "command": command}, indent=1, default=str) + "\n")
        out.print(f"\nprobe: {verdict} ({report.seconds:.1f} s of checks); the report is in {directory / 'report.json'}", markup=False)
    else:
        out.print(f"\nprobe: {verdict} ({report.seconds:.1f} s of checks)", markup=False)
    return 1 if found else 0


def _recheck(directory: Path, master: str | None, out: Console, err: Console) -> int:
    """``--from DIR``: the checks and findings of a recorded probe, without a target."""
    record = directory / "probe.jsonl" if directory.is_dir() else directory
    if not record.is_file():
        raise TxconformError(f"--from {directory}: no probe.jsonl there; give a directory txconform probe wrote")
    try:
        with open(record, encoding="utf-8") as fh:
            header = json.loads(fh.readline())
    except (ValueError, UnicodeDecodeError):
        header = None
    if not isinstance(header, dict) or header.get("format") != "txconform-probe":
        raise TxconformError(f"{record}:1: not the header of a txconform probe record; give a directory txconform probe wrote")
    directory = record.parent
    print_summary(directory, out)
    return _check_and_report(directory, _record_findings(directory), str(header.get("command") or ""), master, out, err, write=False)


def print_summary(directory: Path, out: Console) -> None:
    summary = summarise(directory)
    plan = summary["plan"]
    out.print(f"target: {summary['target_version']} at {summary['bootstrap']}", markup=False)
    out.print(f"clients: {', '.join(f'{k} {v}' for k, v in summary['clients'].items())}", markup=False)
    chosen = (
        ("zombie", plan.get("zombie")),
        ("kill", plan.get("kill")),
        ("open", plan.get("open_txn")),
        ("ctp", plan.get("ctp")),
        ("kafka-python", plan.get("kafka_python")),
        ("java", plan.get("java")),
    )
    scenarios = ",".join(s for s, on in chosen if on)
    out.print(f"plan: seed {plan.get('seed')}, topic {plan.get('topic')}, {summary['partitions']} partitions, scenarios {scenarios or 'none'}", markup=False)
    out.print(
        f"recorded: {summary['sends']} sends in {summary['txns']} transactions ({summary['outcomes']}), "
        f"{summary['polls']} polls, {summary['fetches']} raw Fetch responses",
        markup=False,
    )
    for note in summary["notes"]:
        out.print(f"  note: {note}", markup=False)


def check(directory: Path, master: str | None, err: Console, spark_factory: Any = None, keep: bool = True) -> Any:
    """The replay checks on a probe's record (the Spark session from ``spark_factory``, else a local one)."""
    try:
        from spark_replay.adapters import FORMATS
        from spark_replay.replay import ReplayOptions, run_replay
        from spark_replay.session import replay_spark  # noqa: F401 (on_spark's; checked here for the extra)
    except ImportError as e:
        raise TxconformError(f"the probe's checks need the spark extra ({e.name} is missing): pip install 'txconform[spark]', or use --no-check") from None
    log = Path(tempfile.gettempdir()) / f"txconform-probe-{os.getpid()}-spark.log"

    def progress(s: str) -> None:
        err.print(f"probe: {s}", markup=False)

    def run(factory: Any) -> Any:
        options = ReplayOptions(input_format="probe", spark_factory=factory, out=directory / "replay" if keep else None, progress=progress)
        return run_replay([directory], FORMATS, options)

    if spark_factory is not None:  # a session the caller owns (the tests')
        return run(spark_factory)
    return on_spark(master, log, run)


def findings_of(report: Any) -> list[dict[str, Any]]:
    from probe.findings import findings

    return findings(report)


def print_findings(found: list[dict[str, Any]], command: str, out: Console) -> list[dict[str, Any]]:
    from probe.findings import where

    if not found:
        return found
    out.print("\nFindings (anomaly: what the broker did; the invariant of specs/kafka/ it breaks):", markup=False)
    for f in found:
        out.print(f"  {f['anomaly']} ({f['check']} {f['kind']}, {f['count']}x; breaks {f['invariant']}): {f['meaning']}", markup=False)
        ex = f["example"]
        if ex:
            out.print(f"    e.g. {where(ex)}: {ex.get('detail')}", markup=False)
    out.print(f"  reproduce: {command}", markup=False)
    return found


def summarise(directory: Path) -> dict[str, Any]:
    """Counts from a probe's record, for the summary lines."""
    header: dict[str, Any] = {}
    kinds: Counter[str] = Counter()
    outcomes: Counter[str] = Counter()
    notes = []
    partitions = None
    with open(directory / "probe.jsonl", encoding="utf-8") as fh:
        for i, raw in enumerate(fh):
            try:
                line = json.loads(raw)
            except ValueError:
                raise TxconformError(f"{directory / 'probe.jsonl'}:{i + 1}: not JSON; give the probe.jsonl a txconform probe run wrote, unchanged") from None
            if not isinstance(line, dict):
                raise TxconformError(f"{directory / 'probe.jsonl'}:{i + 1}: not a JSON object; give the probe.jsonl a txconform probe run wrote, unchanged")
            if i == 0:
                header = line
                partitions = line.get("plan", {}).get("partitions")
                continue
            kinds[str(line.get("type"))] += 1
            if line.get("type") == "txn":
                outcomes[str(line.get("outcome"))] += 1
            if line.get("type") == "note":
                what = line.get("what")
                if what == "partitions":
                    partitions = line.get("got")
                if what in (
                    "ctp-assigned",
                    "ctp-no-assignment",
                    "ctp-failed",
                    "ctp-offsets-failed",
                    "ctp-rewind-failed",
                    "create-topic-failed",
                    "partitions",
                    "observer-failed",
                    "log-failed",
                    "fetch-rc-final-failed",
                    "init-failed",
                    "killed-before-mid",
                ):
                    notes.append(f"{what}: " + ", ".join(f"{k} {v}" for k, v in line.items() if k not in ("type", "seq", "time_ns", "what")))
    words = {"ok": "committed", "fail": "aborted", "info": "unknown"}
    return {
        "target_version": header.get("target_version"),
        "plan": header.get("plan") or {},
        "bootstrap": header.get("bootstrap"),
        "clients": header.get("clients", {}),
        "partitions": partitions,
        "sends": kinds["send"],
        "txns": sum(outcomes.values()),
        "outcomes": ", ".join(f"{outcomes[k]} {w}" for k, w in words.items() if outcomes[k]) or "none ended",
        "polls": kinds["poll"],
        "fetches": kinds["fetch"],
        "notes": notes,
    }
