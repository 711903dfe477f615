"""``txconform serve``: a protocol's reference engine on the wire, for real clients; every session
is a trace of the spec (Kafka: ref_impl/kafka/serve, docs/serve.md; YDB: ref_impl/ydb/serve,
docs/serve-ydb.md)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.text import Text

from trace_check.errors import TxconformError
from trace_check.traces import plugins
from trace_check.traces.protocol import ProtocolInputError, ServeOptions

EXIT_OK = 0


def add_parsers(sub: Any) -> None:
    p = sub.add_parser(
        "serve",
        help="serve Kafka's wire protocol (or YDB's gRPC API) on 127.0.0.1 from the reference engine; real clients' sessions "
        "become traces",
        description="Start a Kafka-compatible broker on 127.0.0.1 whose transaction machinery is the reference broker "
        "(ref_impl/kafka) with open clients: real clients (librdkafka, kafka-python, the Java client) run transactions "
        "against it, and the session is written as a trace that `txconform check` validates against the spec. "
        "With --protocol ydb, the YDB reference engine (ref_impl/ydb) behind YDB's gRPC API for the ydb SDK's topic "
        "transactions (docs/serve-ydb.md). Stops on SIGINT or SIGTERM, writing the trace. See docs/serve.md.",
    )
    p.add_argument("--protocol", default="kafka", metavar="P", help="the protocol plug-in that serves (default kafka)")
    p.add_argument("--port", type=int, default=None,
                   help="TCP port on 127.0.0.1 (default 9092 for kafka, 2136 for ydb; 0 takes a free one and prints it)")
    p.add_argument("--version", default="", metavar="V",
                   help="kafka: the transaction protocol, TV1, TV1V (default: TV1 clients with KIP-890 part 1 verification, as "
                   "Kafka 3.6+) or TV2 (KIP-890 part 2: needs clients that send EndTxn v5); ydb: the spec's Version, v25 or v26 "
                   "(default)")
    p.add_argument("--partitions", type=int, default=1, metavar="N",
                   help="partitions of a topic created on first use (auto.create.topics.enable) or without a count (default 1)")
    p.add_argument("--no-auto-create", dest="auto_create", action="store_false",
                   help="do not create topics that clients name in Metadata or Produce")
    p.add_argument("--bugs", default="", metavar="B",
                   help="switch on bugs of the protocol's bug zoo, e.g. lso_inclusive+no_epoch_bump (ydb: visible_before_commit)")
    p.add_argument("--faults", default="", metavar="F",
                   help="fault switches KIND@REQUEST:N, comma-separated; kafka: drop@EndTxn:1 (the answer is lost, the "
                   "connection closed), delay@Produce:2:300 (held 300 ms), failover@EndTxn:2, restart@Produce:3; ydb: "
                   "restart-A|restart-B|deadline|lose-lock|lose-session|drop-readset|split-B"
                   "@CommitTransaction|RollbackTransaction|UpdateOffsetsInTransaction|Write:N")
    p.add_argument("--workload", default="", metavar="W",
                   help="ydb: the served engine's shape, copy:msgs=N,batch=N,txns=N,plain=N,others=N,commits=N,workers=N "
                   "(the messages of topic A, the most a read batch holds, the transactions in all, the writes to B outside "
                   "a transaction and their producer ids, the batches of A committed outside one, the engine's workers; "
                   "default copy:msgs=8,batch=2,txns=16,plain=256,others=128,commits=256,workers=1); kafka takes none")
    p.add_argument("--trace", type=Path, metavar="FILE", help="write the session's trace here when the server stops")
    p.set_defaults(func=cmd_serve)


def cmd_serve(args: argparse.Namespace, out: Console, err: Console) -> int:
    plugin = plugins.get(args.protocol)
    if plugin.serve is None:
        raise TxconformError(f"--protocol {args.protocol}: this protocol's plug-in serves no clients; kafka and ydb do")
    port = plugin.serve_port if args.port is None else args.port
    options = ServeOptions(port=port, version=args.version, partitions=args.partitions, bugs=args.bugs,
                           faults=args.faults, trace=args.trace, auto_create=args.auto_create, workload=args.workload)
    try:
        server = plugin.serve(options)
    except ProtocolInputError as e:
        raise TxconformError(str(e)) from None
    except OSError as e:
        raise TxconformError(f"--port {port}: cannot listen on 127.0.0.1:{port}: {e.strerror or e}; "
                             "choose another port, or 0 for a free one") from None
    server.run(lambda line: out.print(Text(line)))
    for line in server.summary():
        out.print(Text(line))
    return EXIT_OK
