-------------------------------- MODULE Cone --------------------------------
(***************************************************************************)
(* C*One: the transaction coordinator Odnoklassniki built over Cassandra   *)
(* (seed 003: O. Anastasyev, "NewSQL = NoSQL+ACID", Habr 2018, and its     *)
(* comment thread). The code is closed; everything below is what the seed *)
(* says, quoted with an English gloss, and every place where it is silent  *)
(* and we chose is marked [CHOICE]. ../shared/notes/cone-brief.md is the   *)
(* design brief this follows.                                              *)
(*                                                                         *)
(* Scope: one group of transactions (a token range) with its master and    *)
(* its two backups, one per data centre, and one Cassandra key range with  *)
(* RF = 3, one replica per data centre ("replication factor = 3 - по       *)
(* копии в каждом дата-центре": one copy in each DC). Coordinator i and    *)
(* replica i live in DC i.                                                 *)
(*                                                                         *)
(* Mechanisms, as the seed states them:                                    *)
(*  - Groups. "один координатор выполняет все транзакции с токеном от 0 до  *)
(*    9" (one coordinator runs every transaction of tokens 0..9): the      *)
(*    master of a group serves all of its transactions. "все запросы в     *)
(*    рамках транзакции направляются в координатор" (inside a transaction  *)
(*    every request goes to the coordinator).                              *)
(*  - Locks. "запись необходимо сначала заблокировать, только затем        *)
(*    прочитать, модифицировать и сохранить. Только после успешного        *)
(*    коммита запись может быть разблокирована" (a record is locked first, *)
(*    only then read, modified and saved; unlocked only after a successful *)
(*    commit). The lock table is "банальный HashMap в памяти координатора" *)
(*    (a plain HashMap in the coordinator's memory): `lk`, lost on a crash.*)
(*    [CHOICE] A lock held by another transaction fails the request at     *)
(*    once ("locked"); the client rolls back and may retry. No waiting, so *)
(*    no deadlock.                                                         *)
(*  - Begin. "Координатор эту сущность блокирует ... Если необходимо,      *)
(*    координатор считывает эту сущность из хранилища" (the coordinator    *)
(*    locks the entity named in Begin and reads it from storage).          *)
(*  - Buffered writes. "помещает новые данные в таблицу состояния          *)
(*    транзакций в памяти ... запись в хранилище не производится" (new     *)
(*    data goes to the in-memory transaction table; nothing is written to  *)
(*    storage): `txs[x][t].wr`.                                            *)
(*  - Read your writes. "если ID уже есть в транзакции, то данные берутся  *)
(*    из памяти; если ID в памяти нет, то недостающие данные считываются   *)
(*    из нод-хранилищ, объединяются с уже имеющимися в памяти" (an ID the  *)
(*    transaction holds is read from memory; otherwise from storage,       *)
(*    merged with memory).                                                 *)
(*  - Commit. "сохраняется координатором в logged batch ... Хранилища      *)
(*    делают всё необходимое, чтобы этот пакет был атомарно (полностью)    *)
(*    применен, и возвращают ответ координатору, а тот освобождает         *)
(*    блокировки и подтверждает успешность транзакции клиенту" (the state  *)
(*    is written as a logged batch; once storage answers, the coordinator  *)
(*    releases the locks and confirms to the client). "В c*one - только    *)
(*    QUORUM" (C*One uses QUORUM only: the author, in a comment).          *)
(*    Cassandra's logged batch (StorageProxy.mutateAtomically, 2.0): the   *)
(*    batch is written to the batchlog, the mutations are sent to every    *)
(*    replica, the batchlog entry is removed once the consistency level    *)
(*    answered; an entry left behind is replayed by BatchlogManager later  *)
(*    (entries older than twice the write timeout).                        *)
(*  - Rollback. "координатору достаточно лишь освободить память" (the      *)
(*    coordinator just frees the memory).                                  *)
(*  - Timestamps. "Для каждой обслуживаемой транзакции координатор         *)
(*    генерирует временную метку: каждая последующая больше, чем у         *)
(*    предыдущей ... конфликт будет всегда разрешен в пользу последующей   *)
(*    транзакции ... часы Лэмпорта" (each transaction gets a timestamp     *)
(*    greater than the previous one, so Cassandra's last-write-wins favours *)
(*    the later transaction: Lamport clocks). [CHOICE] The timestamp is    *)
(*    taken at commit, above the clock and above every timestamp the       *)
(*    transaction read; on activation a new master sets its clock above    *)
(*    the group's highest timestamp in storage, read at QUORUM (for        *)
(*    example from a clock row each batch writes). The seed does not say  *)
(*    how timestamps survive a failover.                                   *)
(*  - Indexes. "координатор генерирует и запоминает изменение не только    *)
(*    основной таблицы, но и изменения копий ... блокировки не             *)
(*    используются" (the coordinator generates the index tables' changes   *)
(*    along with the base table's, in the same batch; no locks). An index  *)
(*    row is an ordinary key <<"ix", indexed value, base pk>>. [CHOICE] A  *)
(*    change of the indexed value deletes the old entry and inserts the   *)
(*    new one; an unchanged value writes no index mutation (Cassandra's    *)
(*    Cells.resolveRegular lets a tombstone win a timestamp tie, so a      *)
(*    delete and re-insert at one timestamp deletes: cone_index_same_ts_   *)
(*    tombstone).                                                          *)
(*  - Heartbeats. "каждый координатор рассылает heartbeat-сообщение        *)
(*    остальным ... сообщает ... heartbeat-сообщения от каких координаторов *)
(*    ... он получал" (each coordinator tells the others whom it heard);   *)
(*    "если нода Х получила от большинства ... информацию о нормальном     *)
(*    получении сообщений с ноды Y, значит, Y работает. И наоборот, как    *)
(*    только большинство сообщит о пропаже сообщений с ноды Y, значит, Y   *)
(*    отказал ... если кворум сообщит ноде Х, что не получает от нее более *)
(*    сообщений, значит сама нода X будет считать себя отказавшей" (Y is  *)
(*    alive or dead by a majority's report; X fences itself when a quorum  *)
(*    no longer hears it). "не сообщает об отказе удаленной ноды при       *)
(*    пропаже первого же heartbeat-сообщения от нее, только если пропало   *)
(*    несколько подряд" (a failure is reported only after several missed   *)
(*    heartbeats in a row: 50 ms period, detection in 200 ms).             *)
(*    Time is not a variable here: "self-fencing is faster than detection" *)
(*    is the guard of DeclareDead (a running node is declared dead only    *)
(*    once it has fenced itself), and a GC pause that ends makes the node  *)
(*    read the heartbeats before anything else (Resume). [CHOICE] The      *)
(*    cluster's verdict `dead` is one set: every live node learns a        *)
(*    quorum's report in the next round.                                   *)
(*  - Failover. "первым резервом будет нода из другого дата-центра, а      *)
(*    вторым резервом - нода из третьего ... для активации нового мастера  *)
(*    достаточно определения факта отказа старого" (a fixed backup order   *)
(*    across DCs; detecting the old master's failure is enough to          *)
(*    activate the next: no election). [CHOICE] The new master first waits *)
(*    until the group's batchlog entries are replayed (Drained): the seed  *)
(*    is silent, and without it the new master can read a key whose last   *)
(*    batch is still waiting in the dead master's batchlog                 *)
(*    (cone_failover_no_drain).                                            *)
(*  - Unborn transactions. "клиенты спекулятивно посылают запрос на        *)
(*    открытие транзакции сразу мастеру группы и обоим его резервам, но    *)
(*    ответит на этот запрос только тот, кто является активным мастером"   *)
(*    (Begin goes to the master and both backups; only the active master  *)
(*    answers); "Резервные мастеры ... помещают в очередь нерожденных      *)
(*    транзакций, где они хранятся некоторое время. Если активный мастер   *)
(*    умирает, то новый мастер отрабатывает запросы ... из своей очереди   *)
(*    ... второй ответ игнорируется" (backups queue them for a while; a new *)
(*    master serves its queue; a client already served ignores the second *)
(*    answer). [CHOICE] Such an orphan holds its lock until CoTxTimeout.   *)
(*                                                                         *)
(* Abstractions:                                                           *)
(*  - One group, three coordinators, three replicas. A replica applies a   *)
(*    batch's mutations in one step (in Cassandra the base rows of a group *)
(*    share a partition, but index rows live in other partitions: their    *)
(*    separate arrival at one replica is not modelled). A replica fails    *)
(*    only with its data centre (DcFail); a mutation may be lost on its    *)
(*    way (DropMutation).                                                  *)
(*  - Writing the batchlog is part of CoCommit: a crash before it is a    *)
(*    crash before the commit.                                             *)
(*  - Read and write requests are answered in the coordinator's step      *)
(*    (CoRead, CoWrite): a client waits only on Begin and Commit, whose    *)
(*    answers the faults can delay or lose.                                *)
(*  - A client times out only on a coordinator that cannot serve it, or on *)
(*    a commit not yet answered. An orphan transaction times out           *)
(*    (CoTxTimeout) only once its client has moved on. Both stand for      *)
(*    timers.                                                              *)
(*  - A coordinator that crashes or fences itself does not rejoin. Crashes *)
(*    and pauses hit the active master only: a backup's would only delay  *)
(*    a failover (and cost the models their CI time).                     *)
(*  - The application is the seed's photo album: "add" clients insert a    *)
(*    photo (the Begin entity), lock the album and increment its counter, *)
(*    read the counter back (read your writes) and commit; a "retag"       *)
(*    client changes the indexed column of photo "p0". A retry is          *)
(*    idempotent: an add whose photo is already there rolls back.          *)
(***************************************************************************)
EXTENDS Integers, Sequences, FiniteSets, TLC

(*
  @typeAlias: key = <<Str, Int, Str>>;
  @typeAlias: txn = <<Str, Int>>;
  @typeAlias: mut = <<$key, Int, Bool>>;
  @typeAlias: cell = <<Int, Int, Bool, $txn>>;
  @typeAlias: batch = [t: $txn, co: Int, ts: Int, muts: Set($mut), logged: Bool, blog: Bool, bdc: Set(Int), pend: Set(Int), applied: Set(Int)];
  @typeAlias: tx = [st: Str, ts: Int, rd: Set(<<$key, $txn, Int>>), wr: Set($mut)];
  @typeAlias: coord = [up: Bool, paused: Bool, fenced: Bool, active: Bool, clock: Int];
  @typeAlias: client = [st: Str, att: Int, co: Int, pc: Str, n: Int, ryw: Int];
  @typeAlias: commit = [t: $txn, ts: Int, rd: Set(<<$key, $txn, Int>>), ks: Set($key)];
*)
Cone_typedefs == TRUE

CONSTANTS
    \* Clients that add a photo (named by the photo's key) to the album.
    \* @type: Set(Str);
    Adders,
    \* Clients that change the indexed column ("tag") of photo "p0".
    \* @type: Set(Str);
    Retaggers,
    \* The tag a retagger writes (0, p0's tag at the start, leaves it unchanged).
    \* @type: Int;
    RetagTo,
    \* Attempts per client (1 + retries).
    \* @type: Int;
    MaxAttempts,
    \* Fault budgets: coordinator crashes, GC pauses, cut heartbeat links,
    \* mutations lost on their way to a replica.
    \* @type: Int;
    MaxCrashes,
    \* @type: Int;
    MaxPauses,
    \* @type: Int;
    MaxCuts,
    \* @type: Int;
    MaxDrops,
    \* Data centres lost (the coordinator and the replica in it, at once).
    \* @type: Int;
    MaxDcFails,
    \* The designs the seed warns about, or that it is silent on (BugNames).
    \* @type: Set(Str);
    Bugs

BugNames == {
    "zombie_commit",        \* a GC-paused master resumes and acts before reading heartbeats
    "failover_no_quorum",   \* the first backup declares the master dead on its own missed heartbeats
    "no_ts_bump",           \* a new master keeps its own (lower) clock
    "ts_at_begin",          \* the timestamp is taken at Begin, not at commit
    "unlogged_batch",       \* the commit is an UNLOGGED batch: no batchlog
    "early_unlock",         \* locks are released when the batch is sent, before storage answers
    "commit_cl_one",        \* the commit is acknowledged after one replica (CL ONE)
    "read_without_lock",    \* a read does not lock the key first
    "no_ryw",               \* a read of a key the transaction wrote goes to storage
    "write_through",        \* writes go to storage at once, before commit
    "index_outside_txn",    \* index mutations go in a second batch after the commit
    "index_same_ts_tombstone", \* an unchanged index entry is deleted and re-inserted at one timestamp
    "failover_no_drain",    \* the seed as written: a new master does not wait for the batchlog
    "timeout_as_abort",     \* a commit timeout is reported to the client as an abort
    "local_batchlog"        \* the batchlog entry is kept in the coordinator's data centre only
}

ASSUME Bugs \subseteq BugNames
ASSUME Adders \cap Retaggers = {} /\ "p0" \notin Adders
ASSUME MaxAttempts >= 1

\* @type: (Str) => Bool;
Bug(b) == b \in Bugs

Clients == Adders \cup Retaggers
Coords == 1..3          \* coordinator i: the master (1), the first backup (2), the second (3); in DC i
Replicas == 1..3        \* replica i in DC i
Quorum == 2
\* The replica sets a QUORUM read may get its answers from. A read of all three returns
\* what a read of some two of them returns (the winner's and one more), so pairs suffice.
Quorums == {Q \in SUBSET Replicas : Cardinality(Q) = Quorum}
CoQuorums == {Q \in SUBSET Coords : Cardinality(Q) >= 2}
CoName == <<"x1", "x2", "x3">>

\* Keys: <<"row", 0, pk>> for the album ("a") and the photos; <<"ix", tag, pk>> for the index.
\* @type: (Str) => $key;
Row(pk) == <<"row", 0, pk>>
\* @type: (Int, Str) => $key;
Ix(tag, pk) == <<"ix", tag, pk>>
Album == Row("a")
Photos == {"p0"} \cup Adders
Tags == {0, 1, RetagTo}
Keys == {Album} \cup {Row(p) : p \in Photos} \cup {Ix(g, p) : g \in Tags, p \in Photos}

\* Transactions: <<client, attempt>>; the initial data was written by InitTxn at timestamp 0.
Attempts == 1..MaxAttempts
TxnIds == Clients \X Attempts
InitTxn == <<"init", 0>>
\* The data at the start: album "a" counts 1 photo, "p0", tagged 0 and indexed.
\* @type: Set($mut);
InitData == {<<Album, 1, FALSE>>, <<Row("p0"), 0, FALSE>>, <<Ix(0, "p0"), 1, FALSE>>}

\* @type: (Str) => Str;
Kind(c) == IF c \in Adders THEN "add" ELSE "retag"
\* The entity a client's Begin names: its photo, or p0.
\* @type: (Str) => $key;
Entity(c) == IF c \in Adders THEN Row(c) ELSE Row("p0")

\* The variables, one group per component (the tuples after the declarations, as etcd
\* raft's and CCF's specs group theirs). An action's UNCHANGED names only groups: a
\* component that a step changes in part is split into smaller groups, each a tuple of
\* its own, and the component's group is the tuple of its parts.
VARIABLES
    \* -- clientVars --
    \* The clients: st (idle, begin, open, commit, done), the attempt, the coordinator
    \* serving it (0: none), the program counter, the value read (n) and the
    \* read-your-writes read (ryw; -1: none).
    \* @type: Str -> $client;
    cl,
    \* -- coordVars: the coordinators --
    \* The coordinators: up, paused (GC), fenced (considers itself failed), active master,
    \* clock (nodeVars).
    \* @type: Int -> $coord;
    co,
    \* The lock table of each coordinator: <<key, txn>> (lockVars).
    \* @type: Int -> Set(<<$key, $txn>>);
    lk,
    \* The transaction table of each coordinator: st (none, open, committing, indexing)
    \* (txTableVars).
    \* @type: Int -> ($txn -> $tx);
    txs,
    \* The Begins each coordinator holds: the unborn queue of a backup, the inbox of the
    \* master (unbornVars).
    \* @type: Int -> Set($txn);
    unborn,
    \* -- fdVars: the failure detector --
    \* Heartbeat links cut: <<x, y>> means y does not hear x (cutVars).
    \* @type: Set(<<Int, Int>>);
    cut,
    \* The coordinators a quorum has reported dead (deadVars).
    \* @type: Set(Int);
    dead,
    \* -- storeVars: storage --
    \* Storage: every batch ever sent, in the order sent, with its batchlog entry (blog) and
    \* the data centres that keep it (bdc),
    \* the replicas its mutations are on their way to (pend) and those that applied it
    \* (batchVars).
    \* @type: Seq($batch);
    batches,
    \* The data centres lost (dcVars).
    \* @type: Set(Int);
    dcDown,
    \* -- ghostVars: what the invariants check --
    \* Ghost: every committed transaction (its batch reached storage): timestamp, reads, keys
    \* (histVars).
    \* @type: Set($commit);
    hist,
    \* Ghost: what each attempt's client was told: committed, failed or unknown (toldVars).
    \* @type: Set(<<$txn, Str>>);
    told,
    \* -- faultVars --
    \* Fault budgets used: crashes, pauses, cuts, drops, data centres lost.
    \* @type: <<Int, Int, Int, Int, Int>>;
    faults,
    \* -- historyVars --
    \* History: the last step, its actor and arguments (no step reads it).
    \* @type: [name: Str, actor: Str, client: Str, args: Str -> Int];
    action

\* The groups, smallest first. Steps change most components one variable at a time, so most
\* parts are groups of one variable. faultVars is whole: faults is one variable, the tuple of
\* the five budgets. historyVars, which every step changes, is the part of vars that
\* MCCone's View leaves out.
clientVars == <<cl>>
nodeVars == <<co>>
lockVars == <<lk>>
txTableVars == <<txs>>
unbornVars == <<unborn>>
memoryVars == <<lockVars, txTableVars, unbornVars>>   \* what a coordinator loses in a crash
coordVars == <<nodeVars, memoryVars>>
cutVars == <<cut>>
deadVars == <<dead>>
fdVars == <<cutVars, deadVars>>
batchVars == <<batches>>
dcVars == <<dcDown>>
storeVars == <<batchVars, dcVars>>
histVars == <<hist>>
toldVars == <<told>>
ghostVars == <<histVars, toldVars>>
faultVars == <<faults>>
historyVars == <<action>>
vars == <<clientVars, coordVars, fdVars, storeVars, ghostVars, faultVars, historyVars>>

\* The step's name, who takes it, the client it concerns ("" if none) and its arguments.
\* @type: (Str, Str, Str, Str -> Int) => [name: Str, actor: Str, client: Str, args: Str -> Int];
ActC(name, actor, c, args) == [name |-> name, actor |-> actor, client |-> c, args |-> args]
\* @type: (Str, Str, Str -> Int) => [name: Str, actor: Str, client: Str, args: Str -> Int];
Act(name, actor, args) == ActC(name, actor, "", args)
NoArgs == [s \in {} |-> 0]

\* @type: $tx;
NoTx == [st |-> "none", ts |-> 0, rd |-> {}, wr |-> {}]
\* @type: $client;
IdleClient == [st |-> "idle", att |-> 0, co |-> 0, pc |-> "", n |-> -1, ryw |-> -1]

\* @type: (Int, Int) => Int;
Max(a, b) == IF a >= b THEN a ELSE b
\* @type: (Set(Int)) => Int;
MaxOf(S) == IF S = {} THEN 0 ELSE CHOOSE m \in S : \A o \in S : o <= m

(***************************************************************************)
(* Storage: last write wins.                                               *)
(***************************************************************************)

\* Cell c1 beats cell c2 (Cassandra Cells.resolveRegular: the higher timestamp; at a tie a
\* tombstone; between two live cells, the greater value).
\* @type: ($cell, $cell) => Bool;
Beats(c1, c2) ==
    \/ c1[2] > c2[2]
    \/ c1[2] = c2[2] /\ c1[3] /\ ~c2[3]
    \/ c1[2] = c2[2] /\ c1[3] = c2[3] /\ c1[1] > c2[1]

\* No cell: a key never written reads as absent, written by InitTxn.
NoCell == <<0, -1, TRUE, InitTxn>>

\* @type: (Set($cell)) => $cell;
Winner(S) == IF S = {} THEN NoCell ELSE CHOOSE c \in S : \A o \in S : ~Beats(o, c)

\* The cells of key k that replica r holds.
\* @type: (Int, $key) => Set($cell);
CellsAt(r, k) ==
    {<<m[2], 0, m[3], InitTxn>> : m \in {m \in InitData : m[1] = k}}
    \cup UNION {{<<m[2], batches[i].ts, m[3], batches[i].t>> : m \in {m \in batches[i].muts : m[1] = k}} :
                i \in {i \in DOMAIN batches : r \in batches[i].applied}}

\* What a read of k from the replicas Q returns (the coordinator resolves their answers).
\* @type: (Set(Int), $key) => $cell;
ReadAt(Q, k) == Winner(UNION {CellsAt(r, k) : r \in Q})

\* @type: ($cell) => Bool;
Live(c) == ~c[3]

(***************************************************************************)
(* The failure detector.                                                   *)
(***************************************************************************)

\* The quorums of replicas still up (a data centre's loss takes its replica).
LiveQuorums == {Q \in Quorums : Q \cap dcDown = {}}

\* @type: (Int) => Bool;
Running(x) == co[x].up /\ ~co[x].paused
\* y hears x's heartbeats.
\* @type: (Int, Int) => Bool;
Hears(y, x) == Running(x) /\ Running(y) /\ <<x, y>> \notin cut
\* x knows that a quorum (itself and another) hears it, and is not reported dead.
\* @type: (Int) => Bool;
Confirmed(x) == x \notin dead /\ \E y \in Coords \ {x} : Hears(y, x) /\ Hears(x, y)
\* x may serve transactions.
\* @type: (Int) => Bool;
CanAct(x) == Running(x) /\ ~co[x].fenced /\ co[x].active

\* The group's batchlog is empty: every batch is applied, or was never logged.
Drained == \A i \in DOMAIN batches : ~batches[i].blog

\* The batch of t sent by x.
\* @type: (Int, $txn) => Set(Int);
BatchOf(x, t) == {i \in DOMAIN batches : batches[i].t = t /\ batches[i].co = x}

(***************************************************************************)
(* Init                                                                    *)
(***************************************************************************)

Init ==
    /\ cl = [c \in Clients |-> IdleClient]
    /\ co = [x \in Coords |-> [up |-> TRUE, paused |-> FALSE, fenced |-> FALSE, active |-> x = 1, clock |-> 0]]
    /\ lk = [x \in Coords |-> {}]
    /\ txs = [x \in Coords |-> [t \in TxnIds |-> NoTx]]
    /\ unborn = [x \in Coords |-> {}]
    /\ cut = {}
    /\ dead = {}
    /\ batches = <<>>
    /\ dcDown = {}
    /\ hist = {}
    /\ told = {}
    /\ faults = <<0, 0, 0, 0, 0>>
    /\ action = Act("Init", "", NoArgs)

(***************************************************************************)
(* Clients                                                                 *)
(***************************************************************************)

\* The client's current transaction.
\* @type: (Str) => $txn;
TxnOf(c) == <<c, cl[c].att>>

\* The client sends Begin speculatively to the master and both backups.
\* @type: (Str) => Bool;
ClientBegin(c) ==
    /\ cl[c].st = "idle"
    /\ cl[c].att < MaxAttempts
    /\ LET t == <<c, cl[c].att + 1>>
       IN /\ cl' = [cl EXCEPT ![c] = [IdleClient EXCEPT !.st = "begin", !.att = cl[c].att + 1]]
          /\ unborn' = [x \in Coords |-> IF co[x].up THEN unborn[x] \cup {t} ELSE unborn[x]]
    /\ action' = ActC("ClientBegin", c, c, "attempt" :> cl[c].att + 1)
    /\ UNCHANGED <<nodeVars, lockVars, txTableVars, fdVars, storeVars, ghostVars, faultVars>>

\* The client asks to commit its transaction.
\* @type: (Str) => Bool;
ClientCommit(c) ==
    /\ cl[c].st = "open" /\ cl[c].pc = "commit"
    /\ cl' = [cl EXCEPT ![c].st = "commit"]
    /\ action' = ActC("ClientCommit", c, c, "attempt" :> cl[c].att)
    /\ UNCHANGED <<coordVars, fdVars, storeVars, ghostVars, faultVars>>

\* An add whose photo is already there (an earlier attempt committed) rolls back: the
\* coordinator frees the transaction's memory and locks (CoRollback is this step's effect).
\* @type: (Str) => Bool;
ClientRollback(c) ==
    /\ cl[c].st = "open" /\ cl[c].pc = "rollback"
    /\ LET x == cl[c].co
           t == TxnOf(c)
       IN /\ CanAct(x)
          /\ txs[x][t].st = "open"
          /\ txs' = [txs EXCEPT ![x][t] = NoTx]
          /\ lk' = [lk EXCEPT ![x] = {l \in lk[x] : l[2] # t}]
    /\ cl' = [cl EXCEPT ![c].st = "done"]
    /\ action' = ActC("ClientRollback", c, c, "attempt" :> cl[c].att)
    /\ UNCHANGED <<nodeVars, unbornVars, fdVars, storeVars, ghostVars, faultVars>>

\* The client stops waiting: on a Begin no coordinator that can act holds, on an open
\* transaction whose coordinator cannot act, or on a commit not yet answered. A commit's
\* outcome is then unknown (timeout_as_abort: reported as an abort).
\* @type: (Str) => Bool;
ClientTimeout(c) ==
    LET t == TxnOf(c)
        x == cl[c].co
    IN /\ \/ cl[c].st = "begin" /\ ~\E y \in Coords : CanAct(y) /\ t \in unborn[y]
          \/ cl[c].st = "open" /\ ~CanAct(x)
          \/ cl[c].st = "commit" /\ (~CanAct(x) \/ \A i \in BatchOf(x, t) : Cardinality(batches[i].applied) < Quorum)
       /\ told' = told \cup {<<t, IF cl[c].st = "commit" /\ ~Bug("timeout_as_abort") THEN "unknown" ELSE "failed">>}
       /\ cl' = [cl EXCEPT ![c] = [IdleClient EXCEPT !.att = cl[c].att]]
       /\ action' = ActC("ClientTimeout", c, c, "attempt" :> cl[c].att @@ "unknown" :> IF cl[c].st = "commit" /\ ~Bug("timeout_as_abort") THEN 1 ELSE 0)
       /\ UNCHANGED <<coordVars, fdVars, storeVars, histVars, faultVars>>

(***************************************************************************)
(* Coordinators                                                            *)
(***************************************************************************)

\* Release t's locks and forget it at x.
\* @type: (Int, $txn) => Bool;
Forget(x, t) ==
    /\ txs' = [txs EXCEPT ![x][t] = NoTx]
    /\ lk' = [lk EXCEPT ![x] = {l \in lk[x] : l[2] # t}]

\* Key k is locked at x by a transaction other than t.
\* @type: (Int, $key, $txn) => Bool;
LockedByOther(x, k, t) == \E l \in lk[x] : l[1] = k /\ l[2] # t

\* Client c is waiting on t at x (it ignores an answer about another transaction).
\* @type: (Str, $txn) => Bool;
Waiting(c, t) == cl[c].att = t[2] /\ cl[c].st = "begin"

\* The active master serves a Begin from its inbox (or, once active, its unborn queue):
\* it locks the entity and reads it at QUORUM. A client already served ignores the
\* answer, and the transaction becomes an orphan. A lock held by another fails the Begin.
\* @type: (Int, $txn) => Bool;
CoBegin(x, t) ==
    LET c == t[1]
        k == Entity(c)
    IN /\ CanAct(x)
       /\ t \in unborn[x]
       /\ unborn' = [unborn EXCEPT ![x] = @ \ {t}]
       /\ IF LockedByOther(x, k, t)
          THEN /\ cl' = IF Waiting(c, t) THEN [cl EXCEPT ![c] = [IdleClient EXCEPT !.att = cl[c].att]] ELSE cl
               /\ told' = IF Waiting(c, t) THEN told \cup {<<t, "failed">>} ELSE told
               /\ UNCHANGED <<nodeVars, lockVars, txTableVars>>
               /\ action' = ActC("CoBegin", CoName[x], c, "attempt" :> t[2] @@ "locked" :> 1 @@ "orphan" :> IF Waiting(c, t) THEN 0 ELSE 1)
          ELSE \E Q \in LiveQuorums :
                LET cell == ReadAt(Q, k)
                    ts == IF Bug("ts_at_begin") THEN co[x].clock + 1 ELSE 0
                IN /\ lk' = [lk EXCEPT ![x] = @ \cup {<<k, t>>}]
                   /\ txs' = [txs EXCEPT ![x][t] = [st |-> "open", ts |-> ts, rd |-> {<<k, cell[4], cell[2]>>}, wr |-> {}]]
                   /\ co' = IF Bug("ts_at_begin") THEN [co EXCEPT ![x].clock = ts] ELSE co
                   /\ cl' = IF Waiting(c, t)
                            THEN [cl EXCEPT ![c] = [@ EXCEPT !.st = "open", !.co = x, !.n = IF Live(cell) THEN cell[1] ELSE -1,
                                                     !.pc = IF Kind(c) = "retag" THEN "write"
                                                            ELSE IF Live(cell) THEN "rollback" ELSE "read"]]
                            ELSE cl
                   /\ told' = told
                   /\ action' = ActC("CoBegin", CoName[x], c, "attempt" :> t[2] @@ "locked" :> 0 @@ "orphan" :> (IF Waiting(c, t) THEN 0 ELSE 1)
                                      @@ "read_ts" :> cell[2] @@ "read_val" :> cell[1])
       /\ UNCHANGED <<fdVars, storeVars, histVars, faultVars>>

\* The backups drop a Begin from their unborn queues when its time to live runs out, which
\* is longer than a client waits. [CHOICE] The backups got the Begin at the same moment
\* and keep it for the same time, so it expires at both in one step.
\* @type: ($txn) => Bool;
CoUnbornExpire(t) ==
    /\ \E x \in Coords : t \in unborn[x] /\ ~co[x].active
    /\ ~Waiting(t[1], t)
    /\ unborn' = [x \in Coords |-> IF co[x].active THEN unborn[x] ELSE unborn[x] \ {t}]
    /\ action' = ActC("CoUnbornExpire", t[1], t[1], "attempt" :> t[2])
    /\ UNCHANGED <<clientVars, nodeVars, lockVars, txTableVars, fdVars, storeVars, ghostVars, faultVars>>

\* The value of key k in t's transaction: its own write if it has one (read your writes),
\* else what a QUORUM read of storage returns.
\* @type: (Int, $txn, $key) => Set($mut);
Buffered(x, t, k) == {m \in txs[x][t].wr : m[1] = k}

\* An add locks the album and reads its counter (program step "read"), then reads it again
\* after writing it (step "ryw": from memory).
\* @type: (Int, Str) => Bool;
CoRead(x, c) ==
    LET t == TxnOf(c)
    IN /\ cl[c].st = "open" /\ cl[c].co = x /\ cl[c].pc \in {"read", "ryw"}
       /\ CanAct(x)
       /\ txs[x][t].st = "open"
       /\ IF cl[c].pc = "read" /\ ~Bug("read_without_lock") /\ LockedByOther(x, Album, t)
          THEN \* locked: the transaction is rolled back and the client told so
               /\ Forget(x, t)
               /\ cl' = [cl EXCEPT ![c] = [IdleClient EXCEPT !.att = cl[c].att]]
               /\ told' = told \cup {<<t, "failed">>}
               /\ action' = ActC("CoRead", CoName[x], c, "attempt" :> t[2] @@ "locked" :> 1)
          ELSE /\ lk' = IF Bug("read_without_lock") THEN lk ELSE [lk EXCEPT ![x] = @ \cup {<<Album, t>>}]
               /\ IF Buffered(x, t, Album) # {} /\ ~Bug("no_ryw")
                  THEN LET v == (CHOOSE m \in Buffered(x, t, Album) : TRUE)[2]
                       IN /\ cl' = [cl EXCEPT ![c].ryw = v, ![c].pc = "commit"]
                          /\ txs' = txs
                          /\ action' = ActC("CoRead", CoName[x], c, "attempt" :> t[2] @@ "locked" :> 0 @@ "read_ts" :> -1 @@ "read_val" :> v)
                  ELSE \E Q \in LiveQuorums :
                        LET cell == ReadAt(Q, Album)
                        IN /\ cl' = IF cl[c].pc = "read"
                                    THEN [cl EXCEPT ![c].n = cell[1], ![c].pc = "write"]
                                    ELSE [cl EXCEPT ![c].ryw = cell[1], ![c].pc = "commit"]
                           /\ txs' = IF cl[c].pc = "read"
                                     THEN [txs EXCEPT ![x][t].rd = @ \cup {<<Album, cell[4], cell[2]>>}]
                                     ELSE txs
                           /\ action' = ActC("CoRead", CoName[x], c, "attempt" :> t[2] @@ "locked" :> 0 @@ "read_ts" :> cell[2] @@ "read_val" :> cell[1])
               /\ told' = told
       /\ UNCHANGED <<nodeVars, unbornVars, fdVars, storeVars, histVars, faultVars>>

\* The mutations of a client's write: an add writes the counter, its photo (tag 1) and the
\* photo's index entry; a retag writes p0's tag and moves p0's index entry.
\* @type: (Str) => Set($mut);
WriteMuts(c) ==
    IF Kind(c) = "add"
    THEN {<<Album, cl[c].n + 1, FALSE>>, <<Row(c), 1, FALSE>>, <<Ix(1, c), 1, FALSE>>}
    ELSE {<<Row("p0"), RetagTo, FALSE>>}
         \cup (IF cl[c].n # RetagTo \/ Bug("index_same_ts_tombstone")
               THEN (IF cl[c].n >= 0 THEN {<<Ix(cl[c].n, "p0"), 0, TRUE>>} ELSE {}) \cup {<<Ix(RetagTo, "p0"), 1, FALSE>>}
               ELSE {})

\* @type: ($mut) => Bool;
IsIndex(m) == m[1][1] = "ix"

\* The data centre after d (in the order 1, 2, 3, 1) that is still up.
\* @type: (Int) => Int;
NextLiveDc(d) == IF (d % 3) + 1 \notin dcDown THEN (d % 3) + 1 ELSE ((d + 1) % 3) + 1

\* A batch as the coordinator sends it: logged (in the batchlog) unless unlogged_batch. [CHOICE]
\* The batchlog entry is kept in two data centres, the coordinator's and the next one up, so that
\* losing one leaves a copy to replay. local_batchlog keeps it in the coordinator's only:
\* Cassandra picks batchlog endpoints in the local data centre (BatchlogManager, 2.0:
\* getBatchlogEndpoints(localDataCenter, ...)), which holds one replica here.
\* @type: ($txn, Int, Int, Set($mut), Bool) => $batch;
NewBatch(t, x, ts, muts, logged) ==
    [t |-> t, co |-> x, ts |-> ts, muts |-> muts, logged |-> logged, blog |-> logged,
     bdc |-> IF ~logged THEN {} ELSE IF Bug("local_batchlog") THEN {x} ELSE {x, NextLiveDc(x)},
     pend |-> Replicas \ dcDown, applied |-> {}]

\* The coordinator buffers a write in memory (write_through: and sends it to storage at once).
\* @type: (Int, Str) => Bool;
CoWrite(x, c) ==
    LET t == TxnOf(c)
        muts == WriteMuts(c)
    IN /\ cl[c].st = "open" /\ cl[c].co = x /\ cl[c].pc = "write"
       /\ CanAct(x)
       /\ txs[x][t].st = "open"
       /\ txs' = [txs EXCEPT ![x][t].wr = @ \cup muts]
       /\ cl' = [cl EXCEPT ![c].pc = IF Kind(c) = "add" THEN "ryw" ELSE "commit"]
       /\ batches' = IF Bug("write_through") THEN Append(batches, NewBatch(t, x, co[x].clock + 1, muts, FALSE)) ELSE batches
       /\ co' = IF Bug("write_through") THEN [co EXCEPT ![x].clock = @ + 1] ELSE co
       /\ action' = ActC("CoWrite", CoName[x], c, "attempt" :> t[2] @@ "batch" :> IF Bug("write_through") THEN Len(batches) + 1 ELSE 0)
       /\ UNCHANGED <<lockVars, unbornVars, fdVars, dcVars, ghostVars, faultVars>>

\* Commit: the timestamp (above the clock and every timestamp read), the logged batch
\* written to the batchlog and sent to every replica. The transaction is committed from
\* here on: its batch is in storage.
\* @type: (Int, Str) => Bool;
CoCommit(x, c) ==
    LET t == TxnOf(c)
        tx == txs[x][t]
        readTs == MaxOf({r[3] : r \in tx.rd})
        ts == IF Bug("ts_at_begin") THEN tx.ts ELSE Max(co[x].clock, readTs) + 1
        muts == IF Bug("index_outside_txn") THEN {m \in tx.wr : ~IsIndex(m)} ELSE tx.wr
    IN /\ cl[c].st = "commit" /\ cl[c].co = x
       /\ CanAct(x)
       /\ tx.st = "open"
       /\ co' = [co EXCEPT ![x].clock = Max(@, ts)]
       /\ batches' = Append(batches, NewBatch(t, x, ts, muts, ~Bug("unlogged_batch")))
       /\ hist' = hist \cup {[t |-> t, ts |-> ts, rd |-> tx.rd, ks |-> {m[1] : m \in tx.wr}]}
       /\ txs' = [txs EXCEPT ![x][t] = [@ EXCEPT !.st = "committing", !.ts = ts]]
       /\ lk' = IF Bug("early_unlock") THEN [lk EXCEPT ![x] = {l \in lk[x] : l[2] # t}] ELSE lk
       /\ action' = ActC("CoCommit", CoName[x], c, "attempt" :> t[2] @@ "ts" :> ts @@ "batch" :> Len(batches) + 1)
       /\ UNCHANGED <<clientVars, unbornVars, fdVars, dcVars, toldVars, faultVars>>

\* Storage answered at the consistency level (QUORUM; commit_cl_one: ONE): the batchlog
\* entry is removed (StorageProxy.mutateAtomically), the locks released, the client told.
\* @type: (Int, $txn) => Bool;
CoCommitDone(x, t) ==
    LET c == t[1]
        need == IF Bug("commit_cl_one") THEN 1 ELSE Quorum
    IN /\ Running(x)
       /\ txs[x][t].st = "committing"
       /\ \E i \in BatchOf(x, t) :
            /\ Cardinality(batches[i].applied) >= need
            /\ batches' = [batches EXCEPT ![i].blog = FALSE]
            /\ action' = ActC("CoCommitDone", CoName[x], c, "attempt" :> t[2] @@ "batch" :> i
                               @@ "told" :> IF cl[c].st = "commit" /\ cl[c].att = t[2] /\ cl[c].co = x THEN 1 ELSE 0)
       /\ IF Bug("index_outside_txn")
          THEN /\ txs' = [txs EXCEPT ![x][t].st = "indexing"]
               /\ lk' = [lk EXCEPT ![x] = {l \in lk[x] : l[2] # t}]
          ELSE Forget(x, t)
       /\ IF cl[c].st = "commit" /\ cl[c].att = t[2] /\ cl[c].co = x
          THEN /\ cl' = [cl EXCEPT ![c].st = "done"]
               /\ told' = told \cup {<<t, "committed">>}
          ELSE UNCHANGED <<clientVars, toldVars>>
       /\ UNCHANGED <<nodeVars, unbornVars, fdVars, dcVars, histVars, faultVars>>

\* index_outside_txn: the index mutations follow in a batch of their own.
\* @type: (Int, $txn) => Bool;
CoIndexWrite(x, t) ==
    /\ Running(x)
    /\ txs[x][t].st = "indexing"
    /\ batches' = Append(batches, NewBatch(t, x, txs[x][t].ts, {m \in txs[x][t].wr : IsIndex(m)}, TRUE))
    /\ txs' = [txs EXCEPT ![x][t] = NoTx]
    /\ action' = ActC("CoIndexWrite", CoName[x], t[1], "attempt" :> t[2] @@ "batch" :> Len(batches) + 1)
    /\ UNCHANGED <<clientVars, nodeVars, lockVars, unbornVars, fdVars, dcVars, ghostVars, faultVars>>

\* An open transaction whose client has moved on (an orphan of the unborn queue, or a
\* client that timed out) is rolled back when its time to live runs out.
\* @type: (Int, $txn) => Bool;
CoTxTimeout(x, t) ==
    /\ CanAct(x)
    /\ txs[x][t].st = "open"
    /\ ~(cl[t[1]].att = t[2] /\ cl[t[1]].co = x /\ cl[t[1]].st \in {"open", "commit"})
    /\ Forget(x, t)
    /\ action' = ActC("CoTxTimeout", CoName[x], t[1], "attempt" :> t[2])
    /\ UNCHANGED <<clientVars, nodeVars, unbornVars, fdVars, storeVars, ghostVars, faultVars>>

(***************************************************************************)
(* Storage and the batchlog                                                *)
(***************************************************************************)

\* The replica a batch's mutations reach next. [CHOICE] In the order r1, r2, r3: replicas
\* do not fail here and reads pick any two, so for one batch the order loses nothing; two
\* batches in flight at once reach the replicas in the same order, which leaves out runs
\* where each is at a different replica (a reduction of the state space: the models
\* would otherwise not fit CI's time).
\* @type: (Int) => Int;
Next1(i) == CHOOSE r \in batches[i].pend : \A o \in batches[i].pend : r <= o

\* A replica applies a batch's mutations.
\* @type: (Int, Int) => Bool;
ApplyMutation(i, r) ==
    /\ r \in batches[i].pend
    /\ batches' = [batches EXCEPT ![i].pend = @ \ {r}, ![i].applied = @ \cup {r}]
    /\ action' = Act("ApplyMutation", "storage", "batch" :> i @@ "replica" :> r)
    /\ UNCHANGED <<clientVars, coordVars, fdVars, dcVars, ghostVars, faultVars>>

\* A mutation is lost on its way (a dropped message, a write timeout at the replica).
\* @type: (Int, Int) => Bool;
DropMutation(i, r) ==
    /\ r \in batches[i].pend
    /\ faults[4] < MaxDrops
    /\ batches' = [batches EXCEPT ![i].pend = @ \ {r}]
    /\ faults' = [faults EXCEPT ![4] = @ + 1]
    /\ action' = Act("DropMutation", "storage", "batch" :> i @@ "replica" :> r)
    /\ UNCHANGED <<clientVars, coordVars, fdVars, dcVars, ghostVars>>

\* The batchlog replays an entry: its mutations go to every replica again (those that had
\* them apply them again, which changes nothing) and the entry is removed. Cassandra's
\* BatchlogManager replays entries older than twice the write timeout: "later", which here
\* is any time after the mutations sent by the coordinator have arrived or been lost.
\* @type: (Int) => Bool;
BatchlogReplay(i) ==
    /\ batches[i].blog
    /\ batches[i].pend = {}
    /\ batches' = [batches EXCEPT ![i].applied = @ \cup (Replicas \ dcDown), ![i].blog = FALSE]
    /\ action' = Act("BatchlogReplay", "storage", "batch" :> i)
    /\ UNCHANGED <<clientVars, coordVars, fdVars, dcVars, ghostVars, faultVars>>

(***************************************************************************)
(* Heartbeats, failure detection, failover                                 *)
(***************************************************************************)

\* Heartbeats from x stop reaching y (lost in a row, or a partition).
\* @type: (Int, Int) => Bool;
Cut(x, y) ==
    /\ x # y /\ <<x, y>> \notin cut
    /\ faults[3] < MaxCuts
    /\ cut' = cut \cup {<<x, y>>}
    /\ faults' = [faults EXCEPT ![3] = @ + 1]
    /\ action' = Act("Cut", CoName[x], "to" :> y)
    /\ UNCHANGED <<clientVars, coordVars, deadVars, storeVars, ghostVars>>

\* @type: (Int, Int) => Bool;
Heal(x, y) ==
    /\ <<x, y>> \in cut
    /\ cut' = cut \ {<<x, y>>}
    /\ action' = Act("Heal", CoName[x], "to" :> y)
    /\ UNCHANGED <<clientVars, coordVars, deadVars, storeVars, ghostVars, faultVars>>

\* x no longer learns that a quorum hears it: it considers itself failed and stops.
\* @type: (Int) => Bool;
CoSelfFence(x) ==
    /\ Running(x) /\ ~co[x].fenced
    /\ ~Confirmed(x)
    /\ co' = [co EXCEPT ![x].fenced = TRUE]
    /\ action' = Act("CoSelfFence", CoName[x], NoArgs)
    /\ UNCHANGED <<clientVars, memoryVars, fdVars, storeVars, ghostVars, faultVars>>

\* A quorum of running coordinators has missed x's heartbeats several times in a row.
\* Detection takes more missed heartbeats than self-fencing, so a running x has fenced
\* itself by then. failover_no_quorum: the first backup decides alone, on its own misses.
\* @type: (Int) => Bool;
DeclareDead(x) ==
    /\ x \notin dead
    /\ IF Bug("failover_no_quorum")
       THEN \E y \in Coords \ {x} : Running(y) /\ ~Hears(y, x)
       ELSE /\ \E Q \in CoQuorums : x \notin Q /\ \A y \in Q : Running(y) /\ ~Hears(y, x)
            /\ ~Running(x) \/ co[x].fenced
    /\ dead' = dead \cup {x}
    /\ action' = Act("DeclareDead", CoName[x], NoArgs)
    /\ UNCHANGED <<clientVars, coordVars, cutVars, storeVars, ghostVars, faultVars>>

\* The first coordinator in the backup order that is not dead becomes the active master
\* once all before it are dead and (Drained) the group's batchlog is empty. Its clock goes
\* above the group's highest timestamp, read at QUORUM. Its lock table starts empty.
\* @type: (Int) => Bool;
CoActivate(x) ==
    /\ Running(x) /\ ~co[x].fenced /\ ~co[x].active
    /\ x \notin dead
    /\ \A y \in 1..(x - 1) : y \in dead
    /\ Drained \/ Bug("failover_no_drain")
    /\ \E Q \in LiveQuorums :
        LET top == MaxOf({batches[i].ts : i \in {i \in DOMAIN batches : batches[i].applied \cap Q # {}}})
        IN /\ co' = [co EXCEPT ![x].active = TRUE, ![x].clock = IF Bug("no_ts_bump") THEN @ ELSE Max(@, top) + 1]
           /\ action' = Act("CoActivate", CoName[x], "top" :> top)
    /\ UNCHANGED <<clientVars, memoryVars, fdVars, storeVars, ghostVars, faultVars>>

\* A coordinator crashes: its memory (locks, transactions, unborn queue) is gone.
\* @type: (Int) => Bool;
Crash(x) ==
    /\ co[x].up /\ co[x].active
    /\ faults[1] < MaxCrashes
    /\ co' = [co EXCEPT ![x].up = FALSE]
    /\ lk' = [lk EXCEPT ![x] = {}]
    /\ txs' = [txs EXCEPT ![x] = [t \in TxnIds |-> NoTx]]
    /\ unborn' = [unborn EXCEPT ![x] = {}]
    /\ faults' = [faults EXCEPT ![1] = @ + 1]
    /\ action' = Act("Crash", CoName[x], NoArgs)
    /\ UNCHANGED <<clientVars, fdVars, storeVars, ghostVars>>

\* A data centre is lost: its coordinator (with its memory), its replica (mutations on their
\* way to it are lost; hinted handoff is not modelled) and the batchlog entries kept there.
\* @type: (Int) => Bool;
DcFail(d) ==
    /\ d \notin dcDown
    /\ faults[5] < MaxDcFails
    /\ dcDown' = dcDown \cup {d}
    /\ co' = [co EXCEPT ![d].up = FALSE]
    /\ lk' = [lk EXCEPT ![d] = {}]
    /\ txs' = [txs EXCEPT ![d] = [t \in TxnIds |-> NoTx]]
    /\ unborn' = [unborn EXCEPT ![d] = {}]
    /\ batches' = [i \in DOMAIN batches |->
                    [batches[i] EXCEPT !.pend = @ \ {d}, !.bdc = @ \ {d}, !.blog = @ /\ (batches[i].bdc \ {d}) # {}]]
    /\ faults' = [faults EXCEPT ![5] = @ + 1]
    /\ action' = Act("DcFail", CoName[d], "dc" :> d)
    /\ UNCHANGED <<clientVars, fdVars, ghostVars>>

\* A GC pause: x stops without knowing it.
\* @type: (Int) => Bool;
Pause(x) ==
    /\ Running(x) /\ co[x].active
    /\ faults[2] < MaxPauses
    /\ co' = [co EXCEPT ![x].paused = TRUE]
    /\ faults' = [faults EXCEPT ![2] = @ + 1]
    /\ action' = Act("Pause", CoName[x], NoArgs)
    /\ UNCHANGED <<clientVars, memoryVars, fdVars, storeVars, ghostVars>>

\* The pause ends. x reads the heartbeats that arrived meanwhile before anything else and
\* fences itself if a quorum reported it dead or no longer hears it (zombie_commit: it
\* carries on as master first).
\* @type: (Int) => Bool;
Resume(x) ==
    /\ co[x].up /\ co[x].paused
    /\ LET resumed == [co EXCEPT ![x].paused = FALSE]
       IN co' = IF Bug("zombie_commit") THEN resumed
                ELSE [resumed EXCEPT ![x].fenced = @ \/ x \in dead
                                                  \/ ~\E y \in Coords \ {x} : <<x, y>> \notin cut /\ <<y, x>> \notin cut /\ Running(y)]
    /\ action' = Act("Resume", CoName[x], NoArgs)
    /\ UNCHANGED <<clientVars, memoryVars, fdVars, storeVars, ghostVars, faultVars>>

(***************************************************************************)
(* Next                                                                    *)
(***************************************************************************)

Next ==
    \/ \E c \in Clients : ClientBegin(c) \/ ClientCommit(c) \/ ClientRollback(c) \/ ClientTimeout(c)
    \/ \E x \in Coords, t \in TxnIds : CoBegin(x, t) \/ CoCommitDone(x, t) \/ CoIndexWrite(x, t) \/ CoTxTimeout(x, t)
    \/ \E t \in TxnIds : CoUnbornExpire(t)
    \/ \E x \in Coords, c \in Clients : CoRead(x, c) \/ CoWrite(x, c) \/ CoCommit(x, c)
    \* the mutations of a batch reach the replicas in the order r1, r2, r3 (ArrivalOrder)
    \/ \E i \in DOMAIN batches : batches[i].pend # {} /\ (ApplyMutation(i, Next1(i)) \/ DropMutation(i, Next1(i)))
    \/ \E i \in DOMAIN batches : BatchlogReplay(i)
    \/ \E x, y \in Coords : Cut(x, y) \/ Heal(x, y)
    \/ \E x \in Coords : CoSelfFence(x) \/ DeclareDead(x) \/ CoActivate(x) \/ Crash(x) \/ Pause(x) \/ Resume(x)
    \/ \E d \in Coords : DcFail(d)

Spec == Init /\ [][Next]_vars

=============================================================================
