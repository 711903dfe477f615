------------------------------ MODULE TraceCone ------------------------------
(***************************************************************************)
(* Trace validation for Cone: is a recorded run (a trace of the reference  *)
(* engine, ref_impl/cone, or of any system that logs the same events) a    *)
(* behaviour of the spec?                                                  *)
(*                                                                         *)
(* Event l names the step as the spec's history variable `action` names   *)
(* it and logs some of the step's parameters (client, attempt,             *)
(* coordinator, peer, batch; DcFail's data centre is compared, not bound), *)
(* its outcome and the variables it changed.                               *)
(* TraceNext takes event l: Bound finds the spec action with the logged    *)
(* parameters, the step must be the one the event names, and every other   *)
(* logged column must equal the spec's value (PostVal). What the event     *)
(* does not log is left free: the spec decides it, and when it can decide *)
(* it in several ways (which two replicas answered a QUORUM read), all are *)
(* explored.                                                               *)
(*                                                                         *)
(* Encoding (trace_check/traces/protocol.py). An event is the tuple        *)
(*   <<action, shape, client, attempt, coordinator, peer, batch, compared>> *)
(* The parameters are plain values ("" or -1: not logged). `compared` is   *)
(* what TLC's ToString prints for the tuple of the logged columns listed   *)
(* in Shapes[shape][1]; the spec side renders the same columns of its own  *)
(* step (PostVal), and the strings must be equal.                          *)
(***************************************************************************)
EXTENDS Cone, ConeProperties

(*
  @typeAlias: event = <<Str, Int, Str, Int, Str, Str, Int, Str>>;
*)
TraceCone_typedefs == TRUE

CONSTANTS
    \* The trace, in chunks of ChunkSize events (the last may be shorter).
    \* @type: Seq(Seq($event));
    TraceChunks,
    \* @type: Int;
    ChunkSize,
    \* The compared columns of each event shape: Shapes[k] = <<columns>>.
    \* @type: Seq(<<Seq(Str)>>);
    Shapes

VARIABLE
    \* The index of the next event to explain.
    \* @type: Int;
    l

\* The number of events.
TraceLen ==
    LET n == Len(TraceChunks)
    IN IF n = 0 THEN 0 ELSE (n - 1) * ChunkSize + Len(TraceChunks[n])

\* Event i (1-based).
\* @type: (Int) => $event;
EventAt(i) == TraceChunks[((i - 1) \div ChunkSize) + 1][((i - 1) % ChunkSize) + 1]

\* @type: ($event) => Str;
EAction(ev) == ev[1]
\* @type: ($event) => Seq(Str);
Cols(ev) == Shapes[ev[2]][1]
\* @type: ($event) => Str;
EClient(ev) == ev[3]
\* @type: ($event) => Int;
EAttempt(ev) == ev[4]
\* @type: ($event) => Str;
ECo(ev) == ev[5]
\* @type: ($event) => Str;
EPeer(ev) == ev[6]
\* @type: ($event) => Int;
EBatch(ev) == ev[7]
\* @type: ($event) => Str;
ECompared(ev) == ev[8]

\* The values a parameter ranges over: the logged one, or every one.
\* @type: ($event) => Set(Str);
ClientSet(ev) == IF EClient(ev) = "" THEN Clients ELSE {EClient(ev)} \cap Clients
\* @type: ($event) => Set($txn);
TxSet(ev) == {t \in TxnIds : (EClient(ev) = "" \/ t[1] = EClient(ev)) /\ (EAttempt(ev) = -1 \/ t[2] = EAttempt(ev))}
\* @type: ($event) => Set(Int);
CoSet(ev) == {x \in Coords : ECo(ev) = "" \/ CoName[x] = ECo(ev)}
\* @type: ($event) => Set(Int);
PeerSet(ev) == {x \in Coords : EPeer(ev) = "" \/ CoName[x] = EPeer(ev)}
\* @type: ($event) => Set(Int);
BatchSet(ev) == {i \in DOMAIN batches : EBatch(ev) = -1 \/ i = EBatch(ev)}

\* The spec action that event ev's action stands for, with the event's parameters.
\* @type: ($event) => Bool;
Bound(ev) ==
    LET a == EAction(ev)
    IN CASE a = "ClientBegin"    -> \E c \in ClientSet(ev) : ClientBegin(c)
         [] a = "ClientCommit"   -> \E c \in ClientSet(ev) : ClientCommit(c)
         [] a = "ClientRollback" -> \E c \in ClientSet(ev) : ClientRollback(c)
         [] a = "ClientTimeout"  -> \E c \in ClientSet(ev) : ClientTimeout(c)
         [] a = "CoBegin"        -> \E x \in CoSet(ev), t \in TxSet(ev) : CoBegin(x, t)
         [] a = "CoUnbornExpire" -> \E t \in TxSet(ev) : CoUnbornExpire(t)
         [] a = "CoRead"         -> \E x \in CoSet(ev), c \in ClientSet(ev) : CoRead(x, c)
         [] a = "CoWrite"        -> \E x \in CoSet(ev), c \in ClientSet(ev) : CoWrite(x, c)
         [] a = "CoCommit"       -> \E x \in CoSet(ev), c \in ClientSet(ev) : CoCommit(x, c)
         [] a = "CoCommitDone"   -> \E x \in CoSet(ev), t \in TxSet(ev) : CoCommitDone(x, t)
         [] a = "CoIndexWrite"   -> \E x \in CoSet(ev), t \in TxSet(ev) : CoIndexWrite(x, t)
         [] a = "CoTxTimeout"    -> \E x \in CoSet(ev), t \in TxSet(ev) : CoTxTimeout(x, t)
         [] a = "ApplyMutation"  -> \E i \in BatchSet(ev) : batches[i].pend # {} /\ ApplyMutation(i, Next1(i))
         [] a = "DropMutation"   -> \E i \in BatchSet(ev) : batches[i].pend # {} /\ DropMutation(i, Next1(i))
         [] a = "BatchlogReplay" -> \E i \in BatchSet(ev) : BatchlogReplay(i)
         [] a = "Cut"            -> \E x \in CoSet(ev), y \in PeerSet(ev) : Cut(x, y)
         [] a = "Heal"           -> \E x \in CoSet(ev), y \in PeerSet(ev) : Heal(x, y)
         [] a = "CoSelfFence"    -> \E x \in CoSet(ev) : CoSelfFence(x)
         [] a = "DeclareDead"    -> \E x \in CoSet(ev) : DeclareDead(x)
         [] a = "CoActivate"     -> \E x \in CoSet(ev) : CoActivate(x)
         [] a = "Crash"          -> \E x \in CoSet(ev) : Crash(x)
         [] a = "Pause"          -> \E x \in CoSet(ev) : Pause(x)
         [] a = "Resume"         -> \E x \in CoSet(ev) : Resume(x)
         [] a = "DcFail"         -> \E d \in Coords : DcFail(d)
         [] OTHER                -> FALSE

\* The step event ev names.
\* @type: ($event) => Bool;
Step(ev) == Bound(ev) /\ action'.name = EAction(ev)

-----------------------------------------------------------------------------
(* The compared columns: the spec's value of each, for the step just taken *)

\* A value no trace logs: what a column reads when the step has no such argument (the spec took
\* another branch than the event's, e.g. a lock conflict where the event logged a read).
NoArg == -1000000000
\* @type: (Str) => Int;
Arg(k) == IF k \in DOMAIN action'.args THEN action'.args[k] ELSE NoArg
\* The coordinator that took the step.
ActorCo == CHOOSE x \in Coords : CoName[x] = action'.actor

\* A logged column of an event of action a: the spec's value for the step.
\* @type: (Str, Str) => a;
PostVal(a, f) ==
    CASE f = "client"       -> action'.client
      [] f = "attempt"      -> Arg("attempt")
      [] f = "coordinator"  -> action'.actor
      [] f = "peer"         -> IF Arg("to") \in Coords THEN CoName[Arg("to")] ELSE ""
      [] f = "batch"        -> Arg("batch")
      [] f = "replica"      -> Arg("replica")
      [] f = "dc"           -> Arg("dc")
      [] f = "result"       -> CASE a = "ClientTimeout" -> IF Arg("unknown") = 1 THEN "unknown" ELSE "failed"
                                 [] a = "CoBegin"       -> IF Arg("locked") = 1 THEN "locked" ELSE IF Arg("orphan") = 1 THEN "orphan" ELSE "ok"
                                 [] a = "CoRead"        -> IF Arg("locked") = 1 THEN "locked" ELSE "ok"
                                 [] a = "CoCommitDone"  -> IF Arg("told") = 1 THEN "committed" ELSE "none"
                                 [] OTHER               -> IF co'[ActorCo].fenced THEN "fenced" ELSE "running"
      [] f = "ts"           -> Arg("ts")
      [] f = "mutations"    -> Cardinality(batches'[Arg("batch")].muts)
      [] f = "read_ts"      -> Arg("read_ts")
      [] f = "read_val"     -> Arg("read_val")
      [] f = "clock"        -> co'[ActorCo].clock
      [] f = "tx_state"     -> txs'[ActorCo][<<action'.client, Arg("attempt")>>].st
      [] f = "client_state" -> cl'[action'.client].st

\* Every compared column of event ev equals the spec's value.
\* @type: ($event) => Bool;
PostMatches(ev) == ToString([k \in DOMAIN Cols(ev) |-> PostVal(EAction(ev), Cols(ev)[k])]) = ECompared(ev)

\* @type: ($event) => Bool;
Explains(ev) == Step(ev) /\ PostMatches(ev)

TraceInit ==
    /\ Init
    /\ l = 1

TraceNext ==
    /\ l <= TraceLen
    /\ Explains(EventAt(l))
    /\ l' = l + 1

TraceSpec == TraceInit /\ [][TraceNext]_<<vars, l>>

-----------------------------------------------------------------------------
(* What the checker asks TLC *)

\* Violated exactly when every event has been explained.
TraceAccepted == l <= TraceLen

\* A spec invariant, checked at the end of the trace only.
\* @type: (Bool) => Bool;
AtEnd(inv) == l > TraceLen => inv

\* Diagnosis of the event at index stuck, the deepest one no behaviour explained.
\* @type: (Int) => Bool;
DiagnoseEnabled(stuck) == l = stuck => ENABLED Bound(EventAt(stuck))
\* @type: (Int) => Bool;
DiagnoseOutcome(stuck) == l = stuck => ENABLED Step(EventAt(stuck))
\* The compared column f, whose logged value renders as `rendered`.
\* @type: (Int, Str, Str) => Bool;
DiagnoseField(stuck, f, rendered) ==
    l = stuck => ENABLED (Step(EventAt(stuck)) /\ ToString(PostVal(EAction(EventAt(stuck)), f)) = rendered)
\* @type: (Int) => Bool;
DiagnoseReached(stuck) == l < stuck

=============================================================================
