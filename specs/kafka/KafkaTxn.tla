------------------------------ MODULE KafkaTxn ------------------------------
(***************************************************************************)
(* Apache Kafka transactions: transactional producers, the transaction    *)
(* coordinator, partition leaders with control markers and the LSO, under *)
(* transaction protocol versions TV1 (classic), TV1V (TV1 clients with    *)
(* KIP-890 part 1 verification) and TV2 (KIP-890 part 2).                  *)
(*                                                                         *)
(* Components and what they keep                                           *)
(*   Producer instances (cl): a client per (transactional.id, instance).   *)
(*     Instance k+1 of a transactional.id is the restart of instance k,    *)
(*     started when k hangs; a hung instance may resume as a zombie. A     *)
(*     client runs TxnsPerInstance transactions, each a fixed program:     *)
(*     [TV1: AddPartitionsToTxn(all partitions)] Produce(1) .. Produce(N)  *)
(*     EndTxn(commit, or abort if the application or an error says so),    *)
(*     with Batches batches per partition. Sequence numbers per partition; *)
(*     one outstanding request at a time, except that with MaxInFlight > 1 *)
(*     produce requests are pipelined (Pipelined); a request that gets no  *)
(*     answer is re-sent (a retry).                                        *)
(*   Transaction coordinator (tc, tlog, cepoch): per transactional.id the  *)
(*     producer epoch, the state (KafkaTxnStates), the partition set, a    *)
(*     pending transition (requests meanwhile get CONCURRENT_TRANSACTIONS) *)
(*     and the durable log __transaction_state (tlog). Every transition is *)
(*     two steps: validate and mark pending (Tc* actions), then append to  *)
(*     the log and apply (TcAppend). Markers are sent once PrepareCommit / *)
(*     PrepareAbort is durable; when every partition acknowledged, the    *)
(*     coordinator logs CompleteCommit / CompleteAbort. Failover bumps the *)
(*     coordinator epoch, drops in-memory state and pending appends,       *)
(*     reloads the last logged state and re-sends pending markers. An      *)
(*     append may also fail without a failover (TcAppendFail, at most      *)
(*     MaxAppendFails): the pending transition is dropped and its request  *)
(*     answered COORDINATOR_NOT_AVAILABLE. With TxnTimeouts the            *)
(*     coordinator aborts an Ongoing transaction on its own               *)
(*     (TcTimeoutAbort).                                                   *)
(*   Partition leaders (plog, pst): the log of batches and markers         *)
(*     (KafkaLog), and per producer: epoch, last sequence, the sequences   *)
(*     of the last 5 batches (duplicate detection), whether a transaction  *)
(*     is open, the coordinator epoch of the last marker, and (memory      *)
(*     only) the lowest sequence of the batches under verification         *)
(*     (VerificationStateEntry, KAFKA-14920).                              *)
(*     With LeaderRestarts, a leader crashes and restarts: the log is      *)
(*     durable, the producer state is rebuilt from it (ProducerStateInLog *)
(*     says nothing is lost), batches held for verification are lost.      *)
(*     With ProducerExpiry, a leader forgets an idle producer              *)
(*     (LeaderExpireProducer); a leader with no state for a producer takes *)
(*     any sequence from it.                                               *)
(*   Group coordinator (gc), when InputSize > 0: the application consumes  *)
(*     an input partition in a consumer group (generation, owner), commits *)
(*     its offsets in the transaction (TV1, TV1V: AddOffsetsToTxn, then    *)
(*     TxnOffsetCommit; TV2: TxnOffsetCommit alone, below) checked against *)
(*     the generation (KIP-447), reads them back with                      *)
(*     OffsetFetch(require_stable); offsets stay pending per producer      *)
(*     until a marker on the offsets partition applies or drops them.      *)
(*     Consumers outside the application (traces only) read with either    *)
(*     isolation level and commit their positions (OffsetCommit) as        *)
(*     standalone consumers of their own groups.                           *)
(*   Network (net): a set of messages, delivered in any order (delay,      *)
(*     reordering), possibly dropped (MaxLoss); retries put several copies *)
(*     of a request in flight (duplication), which may arrive late.        *)
(*     Copies that are the same record are one message, in net as in held: *)
(*     a batch sent again the same way (after a retriable error, with the  *)
(*     same attempt number) while its first copy still waits for           *)
(*     verification merges with it. Kafka would hold both and answer the   *)
(*     second too, an answer the client no longer waits for.               *)
(*                                                                         *)
(* TV2 (KIP-890): the client sends no AddPartitionsToTxn; before the first *)
(* transactional append of a producer to a partition, the leader asks the  *)
(* coordinator to add the partition (AddPartitionsToTxn on the client's    *)
(* behalf, verifying its epoch and state) and holds the batch until the    *)
(* answer; a marker that arrives meanwhile voids the verification.         *)
(* Every EndTxn bumps the epoch: PrepareX is logged with epoch+1, markers  *)
(* carry it, the client takes it from the EndTxn response, and a retried   *)
(* EndTxn (epoch + 1 = current) is recognised as a retry. An abort with no *)
(* transaction open bumps the epoch too (Kafka 4.x, KAFKA-14563).          *)
(*                                                                         *)
(* Offsets under TV1V and TV2 (Kafka 4.x, read in the 4.1.1 sources): the  *)
(* group coordinator verifies a producer's TxnOffsetCommit with the        *)
(* transaction coordinator before it writes the offsets, as a leader       *)
(* verifies a produce (GroupCoordinatorService.commitTransactionalOffsets, *)
(* CoordinatorRuntime.scheduleTransactionalWriteOperation,                 *)
(* CoordinatorPartitionWriter.maybeStartTransactionVerification,           *)
(* ReplicaManager.maybeSendPartitionToTransactionCoordinator). The offsets *)
(* partition's leader holds the request (held[OffsetsPart]) and asks the   *)
(* coordinator to add the offsets partition (TV2: TxnOffsetCommit v5 and   *)
(* later is ADD_PARTITION, AddPartitionsToTxnManager.                      *)
(* txnOffsetCommitRequestVersionToTransactionSupportedOperation) or to     *)
(* check that it is in the transaction (TV1V: v4 and earlier verify only). *)
(* So a TV2 client sends no AddOffsetsToTxn                                *)
(* (TransactionManager.sendOffsetsToTransaction: with transaction V2 it    *)
(* sends TxnOffsetCommit at once) and the TV2 program skips it, as it      *)
(* skips AddPartitionsToTxn. No verification is needed once the producer's *)
(* transaction is open on the offsets partition under its epoch            *)
(* (pst[OffsetsPart]; UnifiedLog.maybeStartTransactionVerification gives   *)
(* no guard when hasOngoingTransaction), and an epoch older than the       *)
(* partition's is refused at once (INVALID_PRODUCER_EPOCH). The answer     *)
(* (GcVerified) is translated as Kafka translates it for TxnOffsetCommit,  *)
(* not as for Produce: PRODUCER_FENCED becomes INVALID_PRODUCER_EPOCH      *)
(* (AddPartitionsToTxnManager), a marker that arrived meanwhile voids the  *)
(* verification (INVALID_TXN_STATE), CONCURRENT_TRANSACTIONS and           *)
(* COORDINATOR_NOT_AVAILABLE reach the client as they are                  *)
(* (CoordinatorOperationExceptionHelper.handleOperationException passes    *)
(* them on; the client retries), and the generation is checked after the   *)
(* verification, in the write                                              *)
(* (OffsetMetadataManager.commitTransactionalOffset). A verification a     *)
(* coordinator failover lost fails the commit with NOT_COORDINATOR         *)
(* (GcVerifyLost), which the client retries.                               *)
(*                                                                         *)
(* Abstractions                                                            *)
(*   - Producer ids and epochs (KIP-360, producer-id rotation): epochs   *)
(*     are bounded by MaxEpoch (Short.MaxValue in Kafka). The spec keeps a *)
(*     producer's id and epoch as one integer, its generation             *)
(*     g = id * (MaxEpoch + 1) + epoch (EpochOf, PidOf), with the ids of  *)
(*     one transactional.id numbered 0, 1, ... as the coordinator hands   *)
(*     them out. Kafka's leaders keep a state per producer id; the spec    *)
(*     keeps one per transactional.id and compares generations, so a      *)
(*     request or marker of an earlier producer id is refused as an old   *)
(*     epoch. That is the same verdict: a new id is used only once every   *)
(*     marker of the old one was written (TcComplete hands it out; a TV2  *)
(*     batch of the new id waits for verification until then), so what   *)
(*     Kafka could still append for the old id is a copy of a marker that *)
(*     closes nothing.                                                    *)
(*   - One batch per Produce request. Replication is one follower per      *)
(*     partition, in sync (it has every acknowledged entry: acks=all)      *)
(*     until it falls behind (FollowerLag: it leaves the ISR, and with     *)
(*     min.insync.replicas = 1 the leader acknowledges alone). The high    *)
(*     watermark, the least log end of the ISR, is therefore the leader's  *)
(*     log end in both cases, and consumers read up to it. A lagging       *)
(*     follower does not catch up and rejoin (that would only shorten what *)
(*     an unclean election loses). With UncleanElections, the leader dies  *)
(*     and the lagging follower is elected (UncleanElection): the log is   *)
(*     truncated to what it has, at most once per partition. Clean         *)
(*     elections are LeaderRestart (the new leader has the same log).      *)
(*   - KIP-360 (ClientBumps): a TV1/TV1V client bumps its epoch after an *)
(*     abortable error with an InitProducerId that gives its producer id  *)
(*     and epoch; the coordinator bumps it, answers a retry (the last      *)
(*     epoch, kept in __transaction_state as lastProducerEpoch) with the  *)
(*     epoch already given, and fences any other epoch. Modelled for one  *)
(*     instance per transactional.id: a zombie's bump is not. Without     *)
(*     ClientBumps the clients are those before Kafka 2.5.                *)
(*   - PrepareEpochFence is entered and left in one step: an               *)
(*     InitProducerId that finds the transaction Ongoing marks             *)
(*     PrepareAbort pending with the fence epoch and answers               *)
(*     CONCURRENT_TRANSACTIONS. Kafka's handleInitProducerId sets the      *)
(*     pending state (prepareFenceProducerEpoch) and at once, in the same  *)
(*     request, calls endTransaction(ABORT, isFromClient = false), which   *)
(*     replaces it with PrepareAbort; between the two, other requests see  *)
(*     a pending transition (CONCURRENT_TRANSACTIONS), as they see the     *)
(*     spec's pending PrepareAbort, and a failover drops either. The one   *)
(*     way the state outlives the request, a failed append of that         *)
(*     PrepareAbort, is TcAppendFail (KAFKA-9666:                          *)
(*     "fence_bump_on_failed_append").                                     *)
(*   - Time is not modelled. A transaction timeout (TxnTimeouts) may fire *)
(*     at any moment of an Ongoing transaction (TcTimeoutAbort). A         *)
(*     producer's expiry (ProducerExpiry) happens only once nothing of the *)
(*     producer is under way for the partition: producer.id.expiration.ms  *)
(*     (a day) outlasts every request.                                     *)
(*   - Open clients (OpenClients; txconform serve): real clients, whose    *)
(*     program is not the spec's, are the environment. ClientSend puts any *)
(*     well-formed request of a known transactional.id, instance and       *)
(*     partition in flight (OpenRequest), ClientTake delivers an answer;   *)
(*     the spec's own clients stay down. The ghost gtx of a request is     *)
(*     what the serving broker infers: the instance is the InitProducerId  *)
(*     (without a producer epoch) that started the producer, the txn      *)
(*     counts the EndTxn answers it was given. A multi-partition          *)
(*     AddPartitionsToTxn is one request per partition (m.part), answered  *)
(*     together; a batch's sequence is its ordinal among the producer     *)
(*     epoch's batches on the partition, with a gap where the client's    *)
(*     record sequences leave one (Kafka counts records, the spec         *)
(*     batches). A request's producer id is the coordinator's current    *)
(*     one (the server refuses others before they reach the spec). The    *)
(*     KIP-447 generation check of TxnOffsetCommit is the serving         *)
(*     broker's group membership, outside the spec; the offset a          *)
(*     TxnOffsetCommit carries is the server's id of the producer's       *)
(*     pending offsets, which the marker commits or drops.                *)
(*   - Fairness (FairSpec, FairClientsSpec) is weak fairness of each kind  *)
(*     of broker step; faults are never fair. The liveness properties are  *)
(*     in KafkaTxnProperties.                                              *)
(*   - Pipelining (MaxInFlight > 1; Kafka allows up to 5 with            *)
(*     idempotence): the models use 2, the least that lets a batch         *)
(*     overtake another, which is what goes wrong with more too; each     *)
(*     partition leader has one connection per client, read in order, one *)
(*     request at a time. A connection failure loses every request and     *)
(*     answer on it. Pipelined produces neither time out nor go late       *)
(*     (ProduceTimeouts, LateRequests); their retries count against        *)
(*     MaxRetries, which stands for delivery.timeout.ms.                   *)
(*   - A restarted leader's producer state comes from a snapshot at its   *)
(*     log end, which keeps only each producer's last batch.               *)
(*   - A marker refused by a leader (older coordinator or producer epoch)  *)
(*     counts as acknowledged; Kafka stops sending it and the transaction  *)
(*     stays prepared until the partition is reloaded.                     *)
(*   - The group coordinator does not fail over: everything gc keeps       *)
(*     (generation, owner, committed and pending transactional offsets) is *)
(*     in __consumer_offsets and reloads unchanged, so a failover would be *)
(*     a step that changes nothing here (a TxnOffsetCommit held for        *)
(*     verification would be lost with it, and retried, as after           *)
(*     GcVerifyLost). Leader-to-coordinator verification traffic is not    *)
(*     lost.                                                               *)
(*   - The offsets partition is not a log here: its producer state         *)
(*     (pst[OffsetsPart]) keeps the epoch, the coordinator epoch of the    *)
(*     last marker and, under TV1V and TV2, whether the producer's         *)
(*     transaction is open there (set by a verified TxnOffsetCommit,       *)
(*     cleared by a marker); no sequences and no verification state (the   *)
(*     group coordinator's appends skip the sequence check:                *)
(*     AppendOrigin.COORDINATOR). Under TV1 the spec writes the offsets    *)
(*     without checking the producer's epoch against the partition's       *)
(*     (Kafka's append would refuse an older one,                          *)
(*     ProducerAppendInfo.checkProducerEpoch) and leaves the open flag     *)
(*     unset.                                                              *)
(*   - TV1V: TV1 clients, and leaders that verify before a producer's      *)
(*     first transactional append to a partition that the partition is in *)
(*     its ongoing transaction (KIP-890 part 1,                            *)
(*     transaction.partition.verification.enable, on by default since 3.6; *)
(*     TransactionCoordinator.handleVerifyPartitionsInTransaction): a late *)
(*     batch after its transaction ended is refused, but one that arrives  *)
(*     while the next transaction (same epoch under TV1) has the partition *)
(*     joins that transaction, the case part 2 closes.                    *)
(*   - TV2 follows KIP-890 part 2 (the leader adds the partition itself);  *)
(*     Kafka 4.0 ships it, the October 2024 source read for this spec     *)
(*     has only part 1 (verification).                                     *)
(*   - Ghost fields (gtx: the client transaction <<t, instance, txn>> a     *)
(*     request, record or marker belongs to; endBy: the client transaction *)
(*     whose EndTxn decided a marker, or <<t, k, 0>> when instance k's     *)
(*     InitProducerId fenced it; zombie: the record was written by an      *)
(*     instance that no longer holds the newest epoch) are read only by    *)
(*     the invariants.                                                     *)
(*                                                                         *)
(* Bugs (constant Bugs), each a real bug or a naive design:                *)
(*   "no_epoch_bump"   InitProducerId does not bump the epoch.             *)
(*   "no_idempotence"  leaders append without sequence checks.             *)
(*   "no_pending_check" the coordinator starts a transition while another *)
(*                     is pending.                                         *)
(*   "lso_inclusive"   read_committed treats the LSO as inclusive.         *)
(*   "no_generation_check" TxnOffsetCommit is not checked against the      *)
(*                     group generation (complete only since Kafka 3.7).   *)
(*   "restart_forgets_producers" a restarted leader does not rebuild its   *)
(*                     producer state from the log (it starts empty).      *)
(*   "early_producer_expiry" KAFKA-9144: a leader forgets a producer while *)
(*                     markers for it are still under way.                 *)
(*   "append_fail_keeps_pending" KAFKA-5351: a failed append to           *)
(*                     __transaction_state leaves the transition pending.  *)
(*   "tv2_endtxn_before_4_0" TV2's EndTxn table before Kafka 4.0           *)
(*                     (KAFKA-14563): an abort from Empty or Complete* is  *)
(*                     INVALID_TXN_STATE, so a late batch can open a       *)
(*                     transaction nobody ends (the stuck LSO).            *)
(*   "tv2_overflow_wrong_pid" KAFKA-18660: a TV2 EndTxn that exhausts the  *)
(*                     epoch answers the old producer id and its last     *)
(*                     epoch instead of the new producer id.              *)
(*   "fence_no_rotation" KAFKA-20090: an abort that fenced the epoch      *)
(*                     (timeout, InitProducerId) up to MaxEpoch completes *)
(*                     without a new producer id.                        *)
(*   "fence_bump_on_failed_append" KAFKA-9666: a fence whose append to    *)
(*                     __transaction_state fails keeps its epoch bump in  *)
(*                     memory; at MaxEpoch the coordinator cannot fence.  *)
(*   "verify_checks_pending" KAFKA-14904: TV1V verification answers       *)
(*                     CONCURRENT_TRANSACTIONS while any transition is    *)
(*                     pending, so a pipelined batch overtakes the one    *)
(*                     before it.                                         *)
(*   "no_lowest_sequence" KAFKA-14920: the leader's verification state    *)
(*                     keeps no lowest sequence, so nothing stops that    *)
(*                     overtaking.                                        *)
(*                                                                         *)
(* Modules: the invariants and temporal properties (what the protocol      *)
(* promises) are in KafkaTxnProperties, which extends this module; the     *)
(* model checkers' module MCKafkaTxn and the trace checkers TraceKafkaTxn  *)
(* and TraceKafkaTxnRecords extend that. The variables are grouped by      *)
(* component: netVars, clientVars, coordVars, leaderVars, groupVars,       *)
(* faultVars.                                                              *)
(***************************************************************************)
EXTENDS Integers, Sequences, FiniteSets, TLC, KafkaTxnStates, KafkaLog

CONSTANTS
    \* @type: Set(Str);
    TxnIds,
    \* @type: Int;
    NumInstances,
    \* @type: Int;
    NumPartitions,
    \* @type: Int;
    TxnsPerInstance,
    \* @type: Str;
    Version,
    \* @type: Set(Str);
    LateRequests,
    \* @type: Int;
    MaxRetries,
    \* @type: Int;
    MaxLoss,
    \* @type: Int;
    MaxFailovers,
    \* @type: Bool;
    AppAborts,
    \* @type: Bool;
    ProduceTimeouts,
    \* @type: Int;
    MaxHangs,
    \* @type: Int;
    InputSize,
    \* @type: Bool;
    LeaderRestarts,
    \* @type: Bool;
    TxnTimeouts,
    \* @type: Bool;
    ProducerExpiry,
    \* @type: Int;
    MaxAppendFails,
    \* @type: Int;
    MaxEpoch,
    \* @type: Bool;
    UncleanElections,
    \* @type: Int;
    MaxInFlight,
    \* @type: Int;
    Batches,
    \* @type: Bool;
    ClientBumps,
    \* @type: Bool;
    OpenClients,
    \* @type: Set(Str);
    Bugs

ASSUME Version \in {"TV1", "TV1V", "TV2"}
ASSUME LateRequests \subseteq {"InitProducerId", "AddPartitionsToTxn", "Produce", "EndTxn"}
ASSUME Bugs \subseteq {"no_epoch_bump", "no_idempotence", "no_pending_check", "lso_inclusive", "no_generation_check",
                        "restart_forgets_producers", "tv2_endtxn_before_4_0", "early_producer_expiry",
                        "append_fail_keeps_pending", "tv2_overflow_wrong_pid", "fence_no_rotation",
                        "fence_bump_on_failed_append", "verify_checks_pending", "no_lowest_sequence"}
ASSUME MaxEpoch \in Nat /\ MaxEpoch >= 2
\* max.in.flight.requests.per.connection: at most 5 with idempotence. A
\* pipelining client's produce requests neither time out nor go late (a
\* request timeout closes the connection; see Pipelined).
ASSUME MaxInFlight \in 1..5 /\ Batches \in Nat /\ Batches >= 1
ASSUME MaxInFlight > 1 => ~ProduceTimeouts /\ "Produce" \notin LateRequests
\* KIP-360 clients: a zombie's epoch bump is not modelled (see ClientBumps).
ASSUME ClientBumps => NumInstances = 1
\* Open clients are real clients (txconform serve): the spec's client program
\* and its KIP-360 bumps are not theirs.
ASSUME OpenClients \in BOOLEAN /\ (OpenClients => ~ClientBumps)

(*
  @typeAlias: inst = <<Str, Int>>;
  @typeAlias: msg = {type: Str, tid: Str, inst: Int, epoch: Int, part: Int, seq: Int, commit: Bool, cepoch: Int, gtx: $gtx, endBy: $gtx, att: Int, err: Str, val: Int, gen: Int};
  @typeAlias: client = {st: Str, epoch: Int, txn: Int, pc: Int, out: Bool, req: $msg, seq: Int -> Int, hung: Bool, commit: Bool, pos: Int, gen: Int, fly: Set($msg), sent: Int, bump: Bool};
  @typeAlias: group = {gen: Int, owner: $inst, committed: Int, pending: Str -> Int, groups: Str -> (Int -> Int)};
  @typeAlias: tentry = {st: Str, epoch: Int, parts: Set(Int), gtx: $gtx, endBy: $gtx, last: Int};
  @typeAlias: coord = {st: Str, epoch: Int, parts: Set(Int), gtx: $gtx, endBy: $gtx, last: Int, todo: Set(Int), pending: Seq({entry: $tentry, replies: Set($msg)})};
  @typeAlias: pstate = {epoch: Int, lastSeq: Int, seqs: Set(Int), open: Bool, cepoch: Int, from: Int, vepoch: Int, vseq: Int};
  @typeAlias: held = {m: $msg, void: Bool};
  @typeAlias: action = {name: Str, actor: Str, txn_id: Str, args: Str -> Int, note: Str};
*)
KafkaTxn_typedefs == TRUE

\* The variables, one group per component (the tuples after the declarations,
\* as etcd raft's and CCF's specs group theirs). An action's UNCHANGED names
\* only groups: a component that steps change in part (the coordinator, the
\* partition leaders, the fault budgets) is split into groups of one variable,
\* and the component's group is the tuple of its parts.
VARIABLES
    \* -- netVars: the network --
    \* Messages in flight.
    \* @type: Set($msg);
    net,
    \* -- clientVars: producer clients --
    \* Producer clients.
    \* @type: $inst -> $client;
    cl,
    \* -- coordVars: the transaction coordinator --
    \* Coordinator, in memory, per transactional.id.
    \* @type: Str -> $coord;
    tc,
    \* __transaction_state: the durable log of each transactional.id's states.
    \* @type: Str -> Seq($tentry);
    tlog,
    \* The coordinator epoch (bumped by every failover).
    \* @type: Int;
    cepoch,
    \* -- leaderVars: partition leaders --
    \* Partition logs.
    \* @type: Int -> Seq($entry);
    plog,
    \* Partition leaders' producer state, per partition and producer.
    \* @type: Int -> (Str -> $pstate);
    pst,
    \* TV1V, TV2: batches a leader holds until the coordinator verified them;
    \* held[OffsetsPart]: the TxnOffsetCommits the group coordinator holds so.
    \* @type: Int -> Set($held);
    held,
    \* Replication: -1 while the partition's follower is in sync; else the
    \* length of the log it has (it fell behind there); -2 once an unclean
    \* election made it the leader.
    \* @type: Int -> Int;
    lag,
    \* -- groupVars: the group coordinator --
    \* The group coordinator of the application's consumer group: generation,
    \* the member that owns the input partition, the committed offset, and
    \* the pending transactional offset of each producer (-1: none); and the
    \* offsets standalone consumers committed in their own groups (groups).
    \* @type: $group;
    gc,
    \* -- faultVars: fault budgets used so far: hangs, retries, lost messages, failovers, failed appends --
    \* @type: Int;
    hangs,
    \* @type: Int;
    retries,
    \* @type: Int;
    losses,
    \* @type: Int;
    failovers,
    \* @type: Int;
    appendFails,
    \* -- historyVars --
    \* The last step, for readable traces (history only).
    \* @type: $action;
    action

\* The groups, smallest first. historyVars, which every step changes, is the
\* part of vars that MCKafkaTxn's View leaves out.
netVars == <<net>>
clientVars == <<cl>>
tcVars == <<tc>>
tlogVars == <<tlog>>
cepochVars == <<cepoch>>
coordVars == <<tcVars, tlogVars, cepochVars>>
plogVars == <<plog>>
pstVars == <<pst>>
heldVars == <<held>>
lagVars == <<lag>>
leaderVars == <<plogVars, pstVars, heldVars, lagVars>>
groupVars == <<gc>>
hangVars == <<hangs>>
retryVars == <<retries>>
lossVars == <<losses>>
failoverVars == <<failovers>>
appendFailVars == <<appendFails>>
faultVars == <<hangVars, retryVars, lossVars, failoverVars, appendFailVars>>
historyVars == <<action>>
vars == <<netVars, clientVars, coordVars, leaderVars, groupVars, faultVars, historyVars>>

Parts == 1..NumPartitions
\* The consumer-offsets partition of the application's group: a transaction
\* that commits offsets adds it (AddOffsetsToTxn; TV2: the group
\* coordinator's verification of TxnOffsetCommit) and gets a marker there.
OffsetsPart == 0
\* Consume-transform-produce: the application reads an input partition of
\* InputSize records, one per transaction, and commits its offsets in the
\* transaction. InputSize = 0: a plain transactional producer.
CTP == InputSize > 0
Instances == TxnIds \X (1..NumInstances)
NoGtx == <<"", 0, 0>>
\* The ghost "requester" of a fence: instance k's InitProducerId (txn 0).
\* @type: (Str, Int) => $gtx;
FenceGtx(t, k) == <<t, k, 0>>
\* @type: ($gtx) => Bool;
IsFence(g) == g[3] = 0 /\ g[2] > 0
\* The ghost "requester" of a coordinator's timeout abort of t.
\* @type: (Str) => $gtx;
TimeoutGtx(t) == <<t, 0, -1>>

\* @type: $msg;
NoMsg == [type |-> "", tid |-> "", inst |-> 0, epoch |-> -1, part |-> 0, seq |-> -1, commit |-> FALSE,
          cepoch |-> -1, gtx |-> NoGtx, endBy |-> NoGtx, att |-> 0, err |-> "NONE", val |-> -1, gen |-> -1]

\* @type: $inst;
NoInst == <<"", 0>>

\* @type: Str -> (Int -> Int);
NoGroups == [g \in {} |-> [q \in {} |-> 0]]

\* @type: (Str, Str, Str -> Int) => $action;
Act(name, actor, args) == [name |-> name, actor |-> actor, txn_id |-> "", args |-> args, note |-> ""]

\* A step whose outcome is an error code worth showing in the trace.
\* @type: (Str, Str, Str -> Int, Str) => $action;
ActNote(name, actor, args, note) == [name |-> name, actor |-> actor, txn_id |-> "", args |-> args, note |-> note]

\* Step a of a coordinator, leader, group coordinator or the network, which
\* acts for many transactional.ids: the one it concerns, for the trace.
\* @type: (Str, $action) => $action;
On(t, a) == [a EXCEPT !.txn_id = t]

\* The parameters a trace shows for client request m.
\* @type: ($msg) => Str -> Int;
RequestArgs(m) ==
    LET base == "instance" :> m.inst @@ "txn" :> m.gtx[3]
    IN CASE m.type = "Produce" -> base @@ "part" :> m.part @@ "seq" :> m.seq @@ "epoch" :> m.epoch
         [] m.type = "TxnOffsetCommit" -> base @@ "offset" :> m.val @@ "generation" :> m.gen
         [] m.type = "EndTxn" -> base @@ "epoch" :> m.epoch @@ "commit" :> (IF m.commit THEN 1 ELSE 0)
         [] OTHER -> base @@ "epoch" :> m.epoch

\* @type: Str -> Int;
NoArgs == [k \in {} |-> 0]

\* @type: ($inst) => Str;
InstName(i) == i[1]

\* The client transaction (ghost) of instance i's current transaction.
\* @type: ($inst) => $gtx;
Gtx(i) == <<i[1], i[2], cl[i].txn>>

-----------------------------------------------------------------------------
(* The logs and their bases                                                *)
(* A log is its base, then the entries of the variable: plog[p] holds the  *)
(* entries of partition p's log after PlogBase[p], tlog[t] those of t's    *)
(* __transaction_state after TlogBase[t]. The bases are empty here, and in *)
(* every model: there, the variables are the whole logs. A trace check of  *)
(* a long trace (trace_check/traces/handoff.py) starts each window from    *)
(* states whose logs begin with the same entries, and gives them as the    *)
(* bases, read once, so that what TLC copies, normalizes and fingerprints  *)
(* at each step is what the window appended, not every entry before it     *)
(* (docs/benchmarks.md, "Long traces"). A base is never cut: the check     *)
(* ends a partition's base where its follower fell behind (lag), the       *)
(* shortest log an unclean election can leave. Every read of a whole log   *)
(* goes through Plog, Tlog and their lengths.                              *)

\* @type: Int -> Seq($entry);
PlogBase == [p \in Parts |-> <<>>]
\* @type: Str -> Seq($tentry);
TlogBase == [t \in TxnIds |-> <<>>]

\* A base and the entries after it. (A trace check has TLC compute it in
\* Java, once for each value of the variable: TraceLoad's TraceConcat,
\* trace_check/engines/java/; Protocol.log_join.)
\* @type: (Seq(a), Seq(a)) => Seq(a);
Joined(base, after) == base \o after

\* Partition p's log, whole.
\* @type: (Int) => Seq($entry);
Plog(p) == Joined(PlogBase[p], plog[p])

\* The number of entries of partition p's log.
\* @type: (Int) => Int;
PlogLen(p) == Len(PlogBase[p]) + Len(plog[p])

\* transactional.id t's __transaction_state, whole.
\* @type: (Str) => Seq($tentry);
Tlog(t) == Joined(TlogBase[t], tlog[t])

\* @type: (Str) => Int;
TlogLen(t) == Len(TlogBase[t]) + Len(tlog[t])

\* Every partition log, and every __transaction_state, whole.
Plogs == [p \in DOMAIN plog |-> Plog(p)]
Tlogs == [t \in DOMAIN tlog |-> Tlog(t)]

\* Ghost: the instance of transactional.id t that holds the newest epoch,
\* read from __transaction_state: the instance whose InitProducerId (an
\* Empty entry) or fence (a PrepareAbort by an InitProducerId) was logged
\* last. Every other instance is a zombie.
\* The instance that the last Empty or fencing entry among entries m+1..n
\* of a transactional.id's log names, or `prev` when there is none.
\* @type: (Seq($tentry), Int, Int, Int) => Int;
LatestInstanceAfter(log, m, n, prev) ==
    LET last == LastUpTo(m + 1, n, LAMBDA j : log[j].st = "Empty" \/ IsFence(log[j].endBy))
    IN IF last = m THEN prev
       ELSE IF log[last].st = "Empty" THEN log[last].gtx[2] ELSE log[last].endBy[2]

\* (Searched from the log's end back: an instance that has run many
\* transactions since its InitProducerId is looked for back to it. A trace
\* check keeps the answer in its index of __transaction_state instead,
\* KafkaTxnProperties: LatestInstanceFromIndex.)
\* @type: (Str) => Int;
LatestInstance(t) == LatestInstanceAfter(Tlog(t), 0, TlogLen(t), 0)

TV2 == Version = "TV2"
\* Leaders verify a producer's first transactional append to a partition with
\* the coordinator (KIP-890): add the partition (TV2) or check it (TV1V).
Verifies == Version \in {"TV1V", "TV2"}

-----------------------------------------------------------------------------
(* Producer ids and epochs. A generation g (the epoch field of clients,    *)
(* messages, the coordinator and leaders) is producer id PidOf(g) at epoch *)
(* EpochOf(g); -1 is no producer yet. MaxEpoch stands for Short.MaxValue.  *)

Span == MaxEpoch + 1
\* @type: (Int) => Int;
EpochOf(g) == IF g < 0 THEN g ELSE g % Span
\* @type: (Int) => Int;
PidOf(g) == IF g < 0 THEN -1 ELSE g \div Span
\* No client may hold MaxEpoch, so that the coordinator can always fence
\* it: from MaxEpoch - 1 on, the next producer of a transactional.id gets a
\* new producer id (TransactionMetadata.isEpochExhausted).
\* @type: (Int) => Bool;
Exhausted(g) == g >= 0 /\ EpochOf(g) >= MaxEpoch - 1
\* The next producer id, at epoch 0.
\* @type: (Int) => Int;
NewPid(g) == (PidOf(g) + 1) * Span
\* The epoch a fence (InitProducerId on an open transaction, a timeout)
\* aborts with: one bump, two under TV2 (the abort bumps as every EndTxn
\* does), never past MaxEpoch (KAFKA-19367: the second bump overflowed at
\* Short.MaxValue - 1; KAFKA-20090: prepareFenceProducerEpoch at MaxEpoch
\* keeps the epoch).
\* @type: (Int) => Int;
FenceEpoch(g) ==
    LET k == IF TV2 THEN 2 ELSE 1
    IN IF EpochOf(g) + k > MaxEpoch THEN PidOf(g) * Span + MaxEpoch ELSE g + k
\* The error for a request of generation e that the coordinator at
\* generation c refuses: another producer id took over, or its epoch is old.
\* @type: (Int, Int) => Str;
FencedError(e, c) == IF PidOf(e) # PidOf(c) THEN "INVALID_PRODUCER_ID_MAPPING" ELSE "PRODUCER_FENCED"
\* @type: (Str) => Bool;
Bug(b) == b \in Bugs

-----------------------------------------------------------------------------
(* The client program of one transaction: pc 1 is AddPartitionsToTxn (TV1  *)
(* and TV1V only), pcs 2 .. 1 + NumPartitions * Batches are Produce,       *)
(* Batches batches to partition 1, then to partition 2, ..., then (CTP    *)
(* only) AddOffsetsToTxn (TV1 and TV1V only) and TxnOffsetCommit, and pc   *)
(* EndPc is EndTxn. A TV2 client sends neither AddPartitionsToTxn nor      *)
(* AddOffsetsToTxn: the leaders and the group coordinator add the          *)
(* partitions (TransactionManager.sendOffsetsToTransaction goes straight   *)
(* to TxnOffsetCommit with transaction V2).                               *)

FirstPc == IF TV2 THEN 2 ELSE 1
LastProducePc == NumPartitions * Batches + 1
AddOffsetsPc == LastProducePc + 1                            \* CTP, TV1 and TV1V only
OffsetCommitPc == LastProducePc + (IF TV2 THEN 1 ELSE 2)     \* CTP only
EndPc == IF CTP THEN OffsetCommitPc + 1 ELSE LastProducePc + 1

\* @type: (Int) => Int;
PartOfPc(pc) == (pc - 2) \div Batches + 1

\* @type: (Int) => Bool;
IsProducePc(pc) == pc >= 2 /\ pc <= LastProducePc

\* Pipelining (max.in.flight.requests.per.connection = MaxInFlight > 1):
\* the client sends a transaction's batches without waiting for the answers,
\* up to MaxInFlight at a time, over one connection per partition leader;
\* its other requests go one at a time as before, and EndTxn waits until
\* every batch is answered (Sender: an EndTxn waits while batches are
\* incomplete). A batch's `att` is then its send stamp on the connection:
\* the leader reads a connection's requests in order and one at a time
\* (SocketServer mutes a channel until its request is answered, also while
\* the batch waits for verification).
Pipelined == MaxInFlight > 1

\* KIP-360 (ClientBumps, Kafka 2.5 clients and brokers): after an abortable
\* error, a TV1 client aborts and then bumps its epoch with an
\* InitProducerId that gives its producer id and epoch
\* (TransactionManager: epochBumpRequired, completeTransaction), so that
\* nothing it sent under the old epoch can land later. A TV2 client gets
\* the bumped epoch from EndTxn and sends no InitProducerId.
KipBump == ClientBumps /\ ~TV2

\* A request of instance i.
\* @type: ($inst, Str) => $msg;
Request(i, type) == [NoMsg EXCEPT !.type = type, !.tid = i[1], !.inst = i[2], !.epoch = cl[i].epoch, !.gtx = Gtx(i)]

\* The reply to request m.
\* @type: ($msg, Str) => $msg;
Reply(m, err) == [m EXCEPT !.type = m.type \o "Resp", !.err = err]

\* Is message n about the same request as m (a copy, a reply, a verification
\* of a produce or of a TxnOffsetCommit)?
\* @type: ($msg, $msg) => Bool;
SameRequest(n, m) ==
    /\ n.type \in {m.type, m.type \o "Resp", "Verify", "VerifyResp"}
    /\ n.tid = m.tid /\ n.inst = m.inst /\ n.gtx = m.gtx /\ n.part = m.part /\ n.seq = m.seq
    /\ n.type \in {"Verify", "VerifyResp"} => m.type \in {"Produce", "TxnOffsetCommit"}

\* Is anything of request m still under way: a copy or a reply in flight, a
\* reply the coordinator will send once its append is durable, or the
\* batch (or TxnOffsetCommit) held for verification? If not, it was lost.
\* @type: ($msg) => Bool;
InFlight(m) ==
    \/ \E n \in net : SameRequest(n, m)
    \/ \E t \in TxnIds : \E k \in DOMAIN tc[t].pending : \E n \in tc[t].pending[k].replies : SameRequest(n, m)
    \/ \E p \in DOMAIN held : \E h \in held[p] : SameRequest(h.m, m)

\* Pipelining: is batch f still on its connection: unread, held for
\* verification, or answered? When its leader goes away with the batch, a
\* verification it asked for may still be on its way, but the client learns
\* from the closed connection that the batch is gone.
\* @type: ($msg) => Bool;
OnConnection(f) ==
    \/ \E n \in net : n.type \in {"Produce", "ProduceResp"} /\ SameRequest(n, f) /\ n.att = f.att
    \/ \E h \in held[f.part] : SameRequest(h.m, f) /\ h.m.att = f.att

-----------------------------------------------------------------------------
(* Initial state *)

\* @type: Str -> $pstate;
FreshProducerState == [t \in TxnIds |-> [epoch |-> -1, lastSeq |-> -1, seqs |-> {}, open |-> FALSE, cepoch |-> -1, from |-> 0,
                                          vepoch |-> -1, vseq |-> -1]]

\* @type: $coord;
FreshCoord == [st |-> "Empty", epoch |-> -1, parts |-> {}, gtx |-> NoGtx, endBy |-> NoGtx, last |-> -1, todo |-> {},
               pending |-> <<>>]

Init ==
    /\ net = {}
    /\ cl = [i \in Instances |-> [st |-> "down", epoch |-> -1, txn |-> 0, pc |-> 0, out |-> FALSE, req |-> NoMsg,
                                  seq |-> [p \in Parts |-> 0], hung |-> FALSE, commit |-> TRUE, pos |-> -1, gen |-> -1,
                                  fly |-> {}, sent |-> 0, bump |-> FALSE]]
    /\ tc = [t \in TxnIds |-> FreshCoord]
    /\ tlog = [t \in TxnIds |-> <<>>]
    /\ cepoch = 0
    /\ plog = [p \in Parts |-> <<>>]
    /\ pst = [p \in {OffsetsPart} \cup Parts |-> FreshProducerState]
    /\ held = [p \in {OffsetsPart} \cup Parts |-> {}]
    /\ lag = [p \in Parts |-> -1]
    /\ gc = [gen |-> 0, owner |-> NoInst, committed |-> 0, pending |-> [t \in TxnIds |-> -1], groups |-> NoGroups]
    /\ hangs = 0
    /\ retries = 0
    /\ losses = 0
    /\ failovers = 0
    /\ appendFails = 0
    /\ action = Act("Init", "", NoArgs)

-----------------------------------------------------------------------------
(* Producer clients *)

\* Instance i starts: the first instance at once, a later one when the one
\* before it hangs (it is presumed dead). It sends InitProducerId.
\* @type: ($inst) => Bool;
StartInstance(i) ==
    /\ ~OpenClients
    /\ cl[i].st = "down"
    /\ IF i[2] = 1 THEN TRUE ELSE cl[<<i[1], i[2] - 1>>].hung
    /\ LET m == [Request(i, "InitProducerId") EXCEPT !.gtx = <<i[1], i[2], 0>>]
       IN /\ cl' = [cl EXCEPT ![i].st = "init", ![i].out = TRUE, ![i].req = m]
          /\ net' = net \cup {m}
    /\ action' = Act("StartInstance", InstName(i), "instance" :> i[2])
    /\ UNCHANGED <<coordVars, leaderVars, groupVars, faultVars>>

\* CTP: does instance i own the input partition in the group's current
\* generation (as its last poll told it)?
\* @type: ($inst) => Bool;
OwnsInput(i) == gc.owner = i /\ cl[i].gen = gc.gen

\* beginTransaction(): purely client-side in Kafka. In CTP, the
\* application processes the record at its position.
\* @type: ($inst) => Bool;
BeginTxn(i) ==
    /\ cl[i].st = "ready" /\ ~cl[i].hung
    /\ cl[i].txn < TxnsPerInstance
    /\ CTP => OwnsInput(i) /\ cl[i].pos \in 0..(InputSize - 1)
    /\ cl' = [cl EXCEPT ![i].st = "intxn", ![i].txn = @ + 1, ![i].pc = FirstPc, ![i].commit = TRUE]
    /\ action' = Act("BeginTxn", InstName(i), "instance" :> i[2] @@ "txn" :> cl[i].txn + 1)
    /\ UNCHANGED <<netVars, coordVars, leaderVars, groupVars, faultVars>>

\* The request for the client's next step.
\* @type: ($inst, Bool) => $msg;
NextRequest(i, commit) ==
    LET pc == cl[i].pc
    IN CASE pc = 1 -> [Request(i, "AddPartitionsToTxn") EXCEPT !.part = 0]
         [] pc = EndPc -> [Request(i, "EndTxn") EXCEPT !.commit = commit]
         [] CTP /\ ~TV2 /\ pc = AddOffsetsPc -> [Request(i, "AddOffsetsToTxn") EXCEPT !.part = OffsetsPart]
         [] CTP /\ pc = OffsetCommitPc -> [Request(i, "TxnOffsetCommit") EXCEPT !.part = OffsetsPart,
                                                                          !.val = cl[i].pos + 1, !.gen = cl[i].gen]
         [] OTHER -> [Request(i, "Produce") EXCEPT !.part = PartOfPc(pc), !.seq = cl[i].seq[PartOfPc(pc)],
                                                   !.val = cl[i].pos]

\* The client sends the request of its next step. At EndTxn it commits, or
\* (AppAborts) the application may choose to abort; after an abortable
\* error it must abort. A pipelining client sends a batch while fewer than
\* MaxInFlight of the partition's are unanswered (a connection per leader)
\* and goes on to its next step at once (the batch waits in fly for its
\* answer); EndTxn waits for every batch.
\* @type: ($inst) => Bool;
SendRequest(i) ==
    /\ cl[i].st = "intxn" /\ ~cl[i].hung /\ ~cl[i].out
    /\ cl[i].pc = EndPc => cl[i].fly = {}
    /\ \E commit \in (IF cl[i].pc = EndPc /\ AppAborts /\ cl[i].commit THEN BOOLEAN ELSE {cl[i].commit}) :
        LET m == NextRequest(i, commit)
        IN /\ IF Pipelined /\ IsProducePc(cl[i].pc)
              THEN LET b == [m EXCEPT !.att = cl[i].sent]
                   IN /\ Cardinality({f \in cl[i].fly : f.part = b.part}) < MaxInFlight
                      \* a batch waiting to be sent again goes first (it is at the
                      \* head of the partition's queue, RecordAccumulator.reenqueue)
                      /\ \A f \in cl[i].fly : f.part = b.part => OnConnection(f)
                      /\ cl' = [cl EXCEPT ![i].fly = @ \cup {b}, ![i].sent = @ + 1, ![i].pc = @ + 1,
                                           ![i].seq[b.part] = @ + 1]
                      /\ net' = net \cup {b}
              ELSE /\ cl' = [cl EXCEPT ![i].out = TRUE, ![i].req = m, ![i].commit = commit]
                   /\ net' = net \cup {m}
           /\ action' = Act(m.type, InstName(i), RequestArgs(m))
    /\ UNCHANGED <<coordVars, leaderVars, groupVars, faultVars>>

\* No answer in time: the client sends its request again. A request that
\* is lost (nothing of it in flight) is re-sent freely, as Kafka's client
\* does. For request types in LateRequests the client may also time out
\* while a copy is still in flight: that copy can arrive after the retry,
\* and late; these retries count against MaxRetries. (A client is out in
\* "ready" only for the OffsetFetch of a CTP owner, retried alike.)
\* @type: ($inst) => Bool;
RetryRequest(i) ==
    /\ cl[i].out /\ ~cl[i].hung
    /\ cl[i].st \in {"init", "ready", "intxn"}
    /\ IF InFlight(cl[i].req)
       THEN /\ cl[i].req.type \in LateRequests /\ retries < MaxRetries
            /\ retries' = retries + 1
            /\ LET m == [cl[i].req EXCEPT !.att = @ + 1]
               IN /\ net' = net \cup {m}
                  /\ cl' = [cl EXCEPT ![i].req = m]
       ELSE /\ net' = net \cup {cl[i].req}
            /\ UNCHANGED <<clientVars, retryVars>>
    /\ UNCHANGED <<coordVars, leaderVars, groupVars, hangVars, lossVars, failoverVars, appendFailVars>>

\* Pipelining: a batch in fly of which nothing is under way (its request
\* was lost with its connection, or refused with an error worth a retry)
\* is sent again, with a new send stamp, so after the batches already on
\* the connection. Batches are re-sent in sequence order (the producer's
\* RecordAccumulator re-queues a retried batch by its sequence). Re-sends
\* count against MaxRetries, which stands for delivery.timeout.ms: once it
\* is spent, the batch expires (ProduceTimeout).
\* @type: ($inst, $msg) => Bool;
RetryBatch(i, f) ==
    /\ ~cl[i].hung /\ cl[i].st = "intxn"
    /\ retries < MaxRetries
    /\ ~OnConnection(f)
    /\ ~\E g \in cl[i].fly : g.part = f.part /\ g.seq < f.seq /\ ~OnConnection(g)
    /\ LET b == [f EXCEPT !.att = cl[i].sent]
       IN /\ cl' = [cl EXCEPT ![i].fly = (@ \ {f}) \cup {b}, ![i].sent = @ + 1]
          /\ net' = net \cup {b}
    /\ retries' = retries + 1
    /\ UNCHANGED <<coordVars, leaderVars, groupVars, hangVars, lossVars, failoverVars, appendFailVars>>

\* @type: ($inst, Int) => Str -> Int;
ClientPartArgs(i, p) == "instance" :> i[2] @@ "txn" :> cl[i].txn @@ "part" :> p

\* @type: ($inst) => Bool;
Retry(i) ==
    \/ RetryRequest(i) /\ action' = Act("Retry", InstName(i), ClientPartArgs(i, cl[i].req.part))
    \/ \E f \in cl[i].fly : RetryBatch(i, f) /\ action' = Act("Retry", InstName(i), ClientPartArgs(i, f.part))

\* A produce request times out (delivery.timeout.ms): the batch is failed,
\* which is an abortable error, so the transaction goes on to abort. The
\* request may still be in flight.
\* @type: ($inst) => Bool;
ProduceTimeoutRequest(i) ==
    /\ cl[i].out /\ ~cl[i].hung /\ cl[i].st = "intxn"
    /\ cl[i].req.type = "Produce"
    /\ ProduceTimeouts
    /\ retries < MaxRetries
    /\ "Produce" \in LateRequests \/ ~InFlight(cl[i].req)
    /\ retries' = retries + 1
    /\ cl' = [cl EXCEPT ![i].out = FALSE, ![i].pc = EndPc, ![i].commit = FALSE, ![i].bump = KipBump]
    /\ UNCHANGED <<netVars, coordVars, leaderVars, groupVars, hangVars, lossVars, failoverVars, appendFailVars>>

\* Pipelining: a batch waiting to be sent again when the retry budget is
\* spent expires (delivery.timeout.ms): an abortable error.
\* @type: ($inst, $msg) => Bool;
ProduceTimeoutBatch(i, f) ==
    /\ ~cl[i].hung /\ cl[i].st = "intxn"
    /\ retries >= MaxRetries
    /\ ~OnConnection(f)
    /\ cl' = [cl EXCEPT ![i].fly = @ \ {f}, ![i].commit = FALSE, ![i].pc = IF cl[i].out THEN @ ELSE EndPc,
                         ![i].bump = KipBump]
    /\ UNCHANGED <<netVars, coordVars, leaderVars, groupVars, faultVars>>

\* @type: ($inst) => Bool;
ProduceTimeout(i) ==
    \/ ProduceTimeoutRequest(i) /\ action' = Act("ProduceTimeout", InstName(i), ClientPartArgs(i, cl[i].req.part))
    \/ \E f \in cl[i].fly :
          ProduceTimeoutBatch(i, f) /\ action' = Act("ProduceTimeout", InstName(i), ClientPartArgs(i, f.part))

\* Does response m answer instance i's outstanding request?
\* @type: ($inst, $msg) => Bool;
AnswersRequest(i, m) ==
    /\ cl[i].out
    /\ m.type = cl[i].req.type \o "Resp"
    /\ m.tid = i[1] /\ m.inst = i[2] /\ m.gtx = cl[i].req.gtx /\ m.part = cl[i].req.part

\* Pipelining: the batch in fly of instance i that response m answers.
\* @type: ($inst, $msg) => Set($msg);
AnsweredBatch(i, m) ==
    {f \in cl[i].fly : m.type = "ProduceResp" /\ m.tid = i[1] /\ m.inst = i[2] /\ m.gtx = f.gtx /\ m.part = f.part
                       /\ m.seq = f.seq /\ m.att = f.att}

\* @type: ($inst, $msg) => Bool;
Answers(i, m) == AnswersRequest(i, m) \/ AnsweredBatch(i, m) # {}

\* The client's state after an error answer (Kafka's TransactionManager):
\* fencing is fatal; a failed produce or verification aborts the transaction.
\* @type: ($inst, $msg) => $client;
AfterError(i, m) ==
    CASE m.err \in {"PRODUCER_FENCED", "INVALID_PRODUCER_EPOCH", "INVALID_PRODUCER_ID_MAPPING"} ->
            [cl[i] EXCEPT !.st = "fenced", !.out = FALSE]
      [] m.type \in {"ProduceResp", "TxnOffsetCommitResp"} ->
            [cl[i] EXCEPT !.out = FALSE, !.pc = EndPc, !.commit = FALSE, !.bump = KipBump]
      [] OTHER ->
            [cl[i] EXCEPT !.st = "failed", !.out = FALSE]

\* Pipelining: what the answer m to batch f does to the client. Success
\* (or a duplicate) retires the batch; a retriable error leaves it in fly to
\* be sent again (RetryBatch); so does OUT_OF_ORDER_SEQUENCE_NUMBER while a
\* batch of lower sequence is unanswered (TransactionManager.canRetry: the
\* batch is not the next one, an earlier one must have failed); fencing is
\* fatal; any other error is abortable: the client stops sending batches and
\* will abort once the others are answered.
\* @type: ($inst, $msg, $msg) => $client;
AfterBatchAnswer(i, m, f) ==
    CASE m.err \in {"NONE", "DUPLICATE_SEQUENCE_NUMBER"} -> [cl[i] EXCEPT !.fly = @ \ {f}]
      [] \/ m.err \in {"CONCURRENT_TRANSACTIONS", "NOT_COORDINATOR", "NOT_ENOUGH_REPLICAS", "COORDINATOR_NOT_AVAILABLE"}
         \/ m.err = "OUT_OF_ORDER_SEQUENCE_NUMBER" /\ \E g \in cl[i].fly : g.part = f.part /\ g.seq < f.seq -> cl[i]
      [] m.err \in {"PRODUCER_FENCED", "INVALID_PRODUCER_EPOCH", "INVALID_PRODUCER_ID_MAPPING"} ->
            [cl[i] EXCEPT !.st = "fenced", !.out = FALSE, !.fly = {}]
      [] OTHER -> [cl[i] EXCEPT !.fly = @ \ {f}, !.commit = FALSE, !.pc = IF cl[i].out THEN @ ELSE EndPc, !.bump = KipBump]

\* The client receives the answer to its outstanding request.
\* @type: ($inst, $msg) => Bool;
ClientReceive(i, m) ==
    /\ m \in net /\ ~cl[i].hung
    /\ Answers(i, m)
    /\ net' = net \ {m}
    /\ cl' = [cl EXCEPT ![i] =
        IF AnsweredBatch(i, m) # {} THEN AfterBatchAnswer(i, m, CHOOSE f \in AnsweredBatch(i, m) : TRUE)
        ELSE IF m.err \in {"CONCURRENT_TRANSACTIONS", "UNSTABLE_OFFSET_COMMIT", "NOT_COORDINATOR", "NOT_ENOUGH_REPLICAS",
                      "COORDINATOR_NOT_AVAILABLE"} THEN [@ EXCEPT !.out = FALSE, !.pc = IF m.type = "InitProducerIdResp" THEN 0 ELSE @]
        ELSE IF m.err \notin {"NONE", "DUPLICATE_SEQUENCE_NUMBER"} THEN AfterError(i, m)
        ELSE CASE m.type = "InitProducerIdResp" ->
                    [@ EXCEPT !.st = IF cl[i].txn = TxnsPerInstance THEN "done" ELSE "ready", !.out = FALSE,
                              !.epoch = m.epoch, !.seq = [p \in Parts |-> 0], !.bump = FALSE]
               [] m.type = "EndTxnResp" ->
                    \* KIP-360: after an abortable error, bump the epoch first (ReInit)
                    [@ EXCEPT !.st = IF cl[i].bump THEN "init" ELSE IF cl[i].txn = TxnsPerInstance THEN "done" ELSE "ready",
                              !.out = FALSE,
                              !.epoch = m.epoch,
                              !.seq = IF TV2 THEN [p \in Parts |-> 0] ELSE @,
                              \* after an abort the application seeks back to the committed offset
                              !.pos = IF ~CTP THEN @ ELSE IF cl[i].commit THEN @ + 1 ELSE -1]
               [] m.type = "OffsetFetchResp" ->
                    [@ EXCEPT !.out = FALSE, !.pos = m.val]
               [] m.type = "ProduceResp" ->
                    [@ EXCEPT !.out = FALSE, !.pc = @ + 1, !.seq[m.part] = @ + 1]
               [] OTHER ->
                    \* (pipelining: a batch failed meanwhile, so the client aborts)
                    [@ EXCEPT !.out = FALSE, !.pc = IF cl[i].commit THEN @ + 1 ELSE EndPc]]
    /\ action' = ActNote("Receive" \o m.type, InstName(i),
                         "instance" :> i[2] @@ "txn" :> cl[i].txn @@ (IF m.type = "ProduceResp" THEN "part" :> m.part ELSE NoArgs)
                         @@ (IF m.type \in {"InitProducerIdResp", "EndTxnResp"} THEN "epoch" :> m.epoch ELSE NoArgs)
                         @@ (IF m.type = "OffsetFetchResp" THEN "offset" :> m.val ELSE NoArgs),
                         m.err)
    /\ UNCHANGED <<coordVars, leaderVars, groupVars, faultVars>>

\* After CONCURRENT_TRANSACTIONS on InitProducerId the client asks again;
\* after an abort that needs an epoch bump (KIP-360) it asks with its
\* producer id and epoch.
\* @type: ($inst) => Bool;
ReInit(i) ==
    /\ cl[i].st = "init" /\ ~cl[i].out /\ ~cl[i].hung
    /\ LET m == [Request(i, "InitProducerId") EXCEPT !.gtx = <<i[1], i[2], 0>>, !.epoch = IF cl[i].bump THEN cl[i].epoch ELSE -1]
       IN /\ cl' = [cl EXCEPT ![i].out = TRUE, ![i].req = m]
          /\ net' = net \cup {m}
    /\ action' = Act("InitProducerId", InstName(i), "instance" :> i[2])
    /\ UNCHANGED <<coordVars, leaderVars, groupVars, faultVars>>

\* A response nobody waits for any more (an answer to an earlier copy).
\* @type: ($msg) => Bool;
DiscardStale(m) ==
    /\ ~OpenClients
    /\ m \in net
    /\ m.type \in {"InitProducerIdResp", "AddPartitionsToTxnResp", "ProduceResp", "EndTxnResp",
                    "AddOffsetsToTxnResp", "TxnOffsetCommitResp", "OffsetFetchResp"}
    /\ ~Answers(<<m.tid, m.inst>>, m)
    /\ net' = net \ {m}
    /\ action' = On(m.tid, Act("DiscardStale", "network", "instance" :> m.inst))
    /\ UNCHANGED <<clientVars, coordVars, leaderVars, groupVars, faultVars>>

\* Instance i hangs (GC pause, VM freeze). Only an instance that has a
\* successor hangs: its successor starts in its place.
\* @type: ($inst) => Bool;
Hang(i) ==
    /\ ~cl[i].hung /\ hangs < MaxHangs
    /\ cl[i].st \in {"init", "ready", "intxn"}
    /\ \/ i[2] < NumInstances /\ cl[<<i[1], i[2] + 1>>].st = "down"
       \/ CTP /\ gc.owner = i
    /\ cl' = [cl EXCEPT ![i].hung = TRUE]
    /\ hangs' = hangs + 1
    /\ action' = Act("Hang", InstName(i), "instance" :> i[2])
    /\ UNCHANGED <<netVars, coordVars, leaderVars, groupVars, retryVars, lossVars, failoverVars, appendFailVars>>

\* A hung instance resumes. If it was replaced meanwhile (a successor
\* started, or the group gave its input away), it does not know: a zombie.
\* @type: ($inst) => Bool;
Resume(i) ==
    /\ cl[i].hung
    /\ cl' = [cl EXCEPT ![i].hung = FALSE]
    /\ action' = Act("Resume", InstName(i), "instance" :> i[2])
    /\ UNCHANGED <<netVars, coordVars, leaderVars, groupVars, faultVars>>

\* CTP: the group gives the input partition to instance i: no member has
\* it yet, or its owner stopped heartbeating (hung: session timeout) or
\* left. The generation is bumped; i learns it and must fetch its position.
\* @type: ($inst) => Bool;
JoinGroup(i) ==
    /\ CTP
    /\ cl[i].st = "ready" /\ ~cl[i].hung /\ ~cl[i].out
    /\ gc.owner # i
    /\ IF gc.owner = NoInst THEN TRUE
       ELSE cl[gc.owner].hung \/ cl[gc.owner].st \in {"fenced", "failed", "done"}
    /\ gc' = [gc EXCEPT !.gen = @ + 1, !.owner = i]
    /\ cl' = [cl EXCEPT ![i].gen = gc.gen + 1, ![i].pos = -1]
    /\ action' = Act("JoinGroup", InstName(i), "instance" :> i[2] @@ "generation" :> gc.gen + 1)
    /\ UNCHANGED <<netVars, coordVars, leaderVars, faultVars>>

\* CTP: the owner asks for the committed offset (OffsetFetch with
\* require_stable: UNSTABLE_OFFSET_COMMIT while transactional offsets are pending).
\* @type: ($inst) => Bool;
FetchOffset(i) ==
    /\ CTP
    /\ cl[i].st = "ready" /\ ~cl[i].hung /\ ~cl[i].out
    /\ OwnsInput(i) /\ cl[i].pos = -1
    /\ LET m == [Request(i, "OffsetFetch") EXCEPT !.part = OffsetsPart]
       IN /\ cl' = [cl EXCEPT ![i].out = TRUE, ![i].req = m]
          /\ net' = net \cup {m}
    /\ action' = Act("OffsetFetch", InstName(i), "instance" :> i[2])
    /\ UNCHANGED <<coordVars, leaderVars, groupVars, faultVars>>

\* CTP: the owner has processed the whole input.
\* @type: ($inst) => Bool;
InputDone(i) ==
    /\ CTP
    /\ cl[i].st = "ready" /\ ~cl[i].hung /\ ~cl[i].out
    /\ OwnsInput(i) /\ cl[i].pos = InputSize
    /\ cl' = [cl EXCEPT ![i].st = "done"]
    /\ action' = Act("InputDone", InstName(i), "instance" :> i[2])
    /\ UNCHANGED <<netVars, coordVars, leaderVars, groupVars, faultVars>>

-----------------------------------------------------------------------------
(* Group coordinator (CTP) *)

\* @type: ($msg) => Bool;
GcOffsetFetch(m) ==
    /\ m \in net /\ m.type = "OffsetFetch"
    /\ net' = (net \ {m}) \cup
            {IF \E t \in TxnIds : gc.pending[t] # -1
             THEN Reply(m, "UNSTABLE_OFFSET_COMMIT")
             ELSE [Reply(m, "NONE") EXCEPT !.val = gc.committed]}
    /\ action' = On(m.tid, Act("GcOffsetFetch", "group", "instance" :> m.inst @@ "committed" :> gc.committed))
    /\ UNCHANGED <<clientVars, coordVars, leaderVars, groupVars, faultVars>>

\* KIP-447: does TxnOffsetCommit m come from the member that owns the input
\* in the current generation? (Open clients: the serving broker checked the
\* generation of its real group.)
\* @type: ($msg) => Bool;
GenerationOk(m) == OpenClients \/ Bug("no_generation_check") \/ (m.gen = gc.gen /\ gc.owner = <<m.tid, m.inst>>)

\* The group coordinator writes TxnOffsetCommit m: a member of another
\* generation is refused (ILLEGAL_GENERATION); otherwise the offset is kept
\* pending for the producer until its transaction's marker. `consumed` are
\* the messages this step takes off the network.
\* @type: ($msg, Set($msg)) => Bool;
WriteOffset(m, consumed) ==
    /\ gc' = IF GenerationOk(m) THEN [gc EXCEPT !.pending[m.tid] = m.val] ELSE gc
    /\ net' = (net \ consumed) \cup {Reply(m, IF GenerationOk(m) THEN "NONE" ELSE "ILLEGAL_GENERATION")}

\* TxnOffsetCommit reaches the group coordinator. TV1, or TV1V/TV2 with the
\* producer's transaction already open on the offsets partition under this
\* epoch: write it. TV1V/TV2 otherwise: an older epoch than the partition's
\* is refused (UnifiedLog.maybeStartTransactionVerification); a newer one is
\* held, and the coordinator is asked to add (TV2) or check (TV1V) the
\* offsets partition, as LeaderProduce does for a batch.
\* @type: ($msg) => Bool;
GcTxnOffsetCommit(m) ==
    /\ m \in net /\ m.type = "TxnOffsetCommit"
    /\ LET s == pst[OffsetsPart][m.tid]
       IN IF ~Verifies \/ (s.open /\ s.epoch = m.epoch)
          THEN /\ WriteOffset(m, {m})
               /\ UNCHANGED leaderVars
          ELSE IF m.epoch < s.epoch
          THEN /\ net' = (net \ {m}) \cup {Reply(m, "INVALID_PRODUCER_EPOCH")}
               /\ UNCHANGED <<leaderVars, groupVars>>
          ELSE /\ held' = [held EXCEPT ![OffsetsPart] = @ \cup {[m |-> m, void |-> FALSE]}]
               /\ net' = (net \ {m}) \cup {[m EXCEPT !.type = "Verify"]}
               /\ UNCHANGED <<plogVars, pstVars, lagVars, groupVars>>
    /\ action' = On(m.tid, Act("GcTxnOffsetCommit", "group", "instance" :> m.inst @@ "offset" :> m.val @@ "generation" :> m.gen))
    /\ UNCHANGED <<clientVars, coordVars, faultVars>>

\* What the client hears when its TxnOffsetCommit's verification failed
\* (the group coordinator's translation, not a leader's VerifyError): a
\* voided verification is INVALID_TXN_STATE; PRODUCER_FENCED becomes
\* INVALID_PRODUCER_EPOCH (AddPartitionsToTxnManager); the rest, retriable
\* CONCURRENT_TRANSACTIONS and COORDINATOR_NOT_AVAILABLE included, is passed
\* on (CoordinatorOperationExceptionHelper.handleOperationException).
\* @type: ($msg) => Str;
GcVerifyError(r) ==
    CASE r.err = "NONE" -> "INVALID_TXN_STATE"
      [] r.err = "PRODUCER_FENCED" -> "INVALID_PRODUCER_EPOCH"
      [] OTHER -> r.err

\* TV1V, TV2: the coordinator answered the verification of a held
\* TxnOffsetCommit. Write it, unless a marker for its producer arrived
\* meanwhile (the VerificationGuard) or the coordinator refused; a write
\* opens the producer's transaction on the offsets partition.
\* @type: ($msg) => Bool;
GcVerified(r) ==
    /\ r \in net /\ r.type = "VerifyResp" /\ r.part = OffsetsPart
    /\ \E h \in held[OffsetsPart] :
        /\ h.m = [r EXCEPT !.type = "TxnOffsetCommit", !.err = "NONE"]
        /\ held' = [held EXCEPT ![OffsetsPart] = @ \ {h}]
        /\ IF r.err = "NONE" /\ ~h.void
           THEN /\ WriteOffset(h.m, {r})
                /\ pst' = IF GenerationOk(h.m)
                          THEN [pst EXCEPT ![OffsetsPart][r.tid].epoch = r.epoch, ![OffsetsPart][r.tid].open = TRUE]
                          ELSE pst
           ELSE /\ net' = (net \ {r}) \cup {Reply(h.m, GcVerifyError(r))}
                /\ UNCHANGED <<pstVars, groupVars>>
        /\ action' = On(r.tid, Act("GcVerified", "group", "instance" :> r.inst @@ "txn" :> r.gtx[3]
                                             @@ "ok" :> (IF r.err = "NONE" /\ ~h.void THEN 1 ELSE 0)))
    /\ UNCHANGED <<clientVars, coordVars, plogVars, lagVars, faultVars>>

\* TV1V, TV2: a coordinator failover lost the verification of held
\* TxnOffsetCommit h (its pending answer died with the old coordinator):
\* the commit fails with NOT_COORDINATOR, which the client retries.
GcVerifyLost ==
    \E h \in held[OffsetsPart] :
        /\ ~\E n \in net : n.type \in {"Verify", "VerifyResp"} /\ n.part = OffsetsPart
                          /\ [n EXCEPT !.type = "TxnOffsetCommit", !.err = "NONE"] = h.m
        /\ ~\E k \in DOMAIN tc[h.m.tid].pending : \E n \in tc[h.m.tid].pending[k].replies :
                n.type = "VerifyResp" /\ [n EXCEPT !.type = "TxnOffsetCommit", !.err = "NONE"] = h.m
        /\ held' = [held EXCEPT ![OffsetsPart] = @ \ {h}]
        /\ net' = net \cup {Reply(h.m, "NOT_COORDINATOR")}
        /\ action' = On(h.m.tid, ActNote("GcVerifyLost", "group", "instance" :> h.m.inst @@ "txn" :> h.m.gtx[3],
                                         "NOT_COORDINATOR"))
    /\ UNCHANGED <<clientVars, coordVars, plogVars, pstVars, lagVars, groupVars, faultVars>>

\* Whether partition-side producer state s accepts marker m: a marker from
\* an older coordinator epoch, or for an older producer epoch, is refused
\* (ProducerAppendInfo.appendEndTxnMarker). Data leaders and the offsets
\* partition check alike.
\* @type: ($msg, $pstate) => Str;
MarkerCheck(m, s) ==
    CASE m.cepoch < s.cepoch -> "TRANSACTION_COORDINATOR_FENCED"
      [] m.epoch < s.epoch -> "INVALID_PRODUCER_EPOCH"
      [] OTHER -> "NONE"

\* A marker on the offsets partition: COMMIT makes the producer's pending
\* offset the committed one, ABORT drops it; it closes the producer's
\* transaction there. Same fencing as a data leader.
\* @type: ($msg) => Bool;
GcMarker(m) ==
    /\ m \in net /\ m.type = "WriteTxnMarkers" /\ m.part = OffsetsPart
    /\ LET s == pst[OffsetsPart][m.tid]
           err == MarkerCheck(m, s)
       IN /\ IF err = "NONE"
             THEN /\ gc' = [gc EXCEPT !.committed = IF m.commit /\ gc.pending[m.tid] # -1 THEN gc.pending[m.tid] ELSE @,
                                      !.pending[m.tid] = -1]
                  /\ pst' = [pst EXCEPT ![OffsetsPart][m.tid].epoch = m.epoch, ![OffsetsPart][m.tid].cepoch = m.cepoch,
                                        ![OffsetsPart][m.tid].open = FALSE]
                  \* a TxnOffsetCommit held for verification meanwhile is voided
                  /\ held' = [held EXCEPT ![OffsetsPart] = {IF h.m.tid = m.tid THEN [h EXCEPT !.void = TRUE] ELSE h : h \in @}]
             ELSE UNCHANGED <<pstVars, heldVars, groupVars>>
          /\ net' = (net \ {m}) \cup {Reply(m, err)}
    /\ action' = On(m.tid, Act("GcMarker", "group", "epoch" :> m.epoch @@ "commit" :> (IF m.commit THEN 1 ELSE 0)))
    /\ UNCHANGED <<clientVars, coordVars, plogVars, lagVars, faultVars>>

-----------------------------------------------------------------------------
(* Transaction coordinator *)

\* A transition is in progress: an append is pending, or (Kafka keeps the
\* pending state CompleteX through the marker phase) markers are being written.
\* @type: (Str) => Bool;
Busy(t) == (tc[t].pending # <<>> \/ tc[t].st \in {"PrepareCommit", "PrepareAbort"}) /\ ~Bug("no_pending_check")

\* Mark a transition pending; TcAppend makes it durable and applies it.
\* Normally at most one is pending (Busy). With "no_pending_check" a second
\* transition, validated against the same state, queues behind the first:
\* both get appended, in order.
\* @type: (Str, $tentry, Set($msg)) => $coord;
Pending(t, entry, replies) ==
    [tc[t] EXCEPT !.pending = Append(@, [entry |-> entry, replies |-> replies])]

\* The coordinator answers at once, changing nothing.
\* @type: ($msg, $msg) => Bool;
TcReplyNow(m, reply) ==
    /\ net' = (net \ {m}) \cup {reply}
    /\ UNCHANGED tcVars

\* KIP-360 (TransactionCoordinator.prepareInitProducerIdTransit,
\* isValidProducerId): the producer id a running producer gives must be the
\* current one, or the one before it with an exhausted epoch (the retry of
\* a bump that rotated the producer id).
\* @type: (Int, Int) => Bool;
ValidProducerId(e, c) == c = -1 \/ PidOf(e) = PidOf(c) \/ (PidOf(e) + 1 = PidOf(c) /\ Exhausted(e))

\* InitProducerId (TransactionCoordinator.handleInitProducerId).
\* @type: ($msg) => Bool;
TcInitProducerId(m) ==
    /\ m \in net /\ m.type = "InitProducerId"
    /\ LET t == m.tid
           c == tc[t]
           \* an exhausted epoch: a new producer id (prepareProducerIdRotation)
           bumped == IF c.epoch = -1 THEN 0 ELSE IF Bug("no_epoch_bump") THEN c.epoch
                     ELSE IF Exhausted(c.epoch) THEN NewPid(c.epoch) ELSE c.epoch + 1
           \* KIP-360: a running producer gives its producer id and epoch (m.epoch >= 0)
           expected == m.epoch >= 0
           \* the epoch it goes on with: bumped from the expected one, or, for the
           \* retry of a bump whose answer was lost (the expected epoch is the
           \* last one), the current one (prepareIncrementProducerEpoch)
           next == IF ~expected \/ m.epoch = c.epoch \/ c.epoch = -1 THEN bumped ELSE c.epoch
       IN CASE Busy(t) \/ c.st \in {"PrepareCommit", "PrepareAbort"} ->
                 TcReplyNow(m, Reply(m, "CONCURRENT_TRANSACTIONS"))
            [] expected /\ ~ValidProducerId(m.epoch, c.epoch) ->
                 TcReplyNow(m, Reply(m, "PRODUCER_FENCED"))
            [] expected /\ c.st # "Ongoing" /\ c.epoch # -1 /\ m.epoch # c.epoch /\ m.epoch # c.last ->
                 TcReplyNow(m, Reply(m, "PRODUCER_FENCED"))
            [] c.st = "Ongoing" /\ Bug("fence_bump_on_failed_append") /\ EpochOf(c.epoch) = MaxEpoch ->
                 \* before KAFKA-9666 and KAFKA-20090, prepareFenceProducerEpoch threw
                 \* IllegalStateException at Short.MaxValue: the request fails
                 TcReplyNow(m, Reply(m, "UNKNOWN_SERVER_ERROR"))
            [] c.st = "Ongoing" ->
                 \* Fence: abort the open transaction under a bumped epoch, and
                 \* tell the new instance to retry once that is done.
                 /\ tc' = [tc EXCEPT ![t] = Pending(t, [st |-> "PrepareAbort", epoch |-> IF Bug("no_epoch_bump") THEN c.epoch ELSE FenceEpoch(c.epoch), parts |-> c.parts,
                                                        gtx |-> c.gtx, endBy |-> FenceGtx(t, m.inst), last |-> c.last],
                                                    {Reply(m, "CONCURRENT_TRANSACTIONS")})]
                 /\ net' = net \ {m}
            [] OTHER ->
                 /\ tc' = [tc EXCEPT ![t] = Pending(t, [st |-> "Empty", epoch |-> next, parts |-> {},
                                                        gtx |-> FenceGtx(t, m.inst), endBy |-> NoGtx,
                                                        \* lastProducerEpoch: kept for a retry of a bump
                                                        last |-> IF ~expected THEN -1 ELSE IF next = c.epoch THEN c.last ELSE c.epoch],
                                                    {[Reply(m, "NONE") EXCEPT !.epoch = next]})]
                 /\ net' = net \ {m}
    /\ action' = On(m.tid, Act("TcInitProducerId", "coordinator", "instance" :> m.inst))
    /\ UNCHANGED <<clientVars, tlogVars, cepochVars, leaderVars, groupVars, faultVars>>

\* TV2: the transaction of t is being ended with a new producer id to
\* follow (its PrepareX is at MaxEpoch), and generation e is that id.
\* @type: (Str, Int) => Bool;
Rotating(t, e) ==
    /\ TV2 /\ EpochOf(tc[t].epoch) = MaxEpoch /\ e = NewPid(tc[t].epoch)
    /\ \/ tc[t].st \in {"PrepareCommit", "PrepareAbort"}
       \/ \E k \in DOMAIN tc[t].pending : tc[t].pending[k].entry.st \in {"PrepareCommit", "PrepareAbort"}

\* AddPartitionsToTxn for partitions `parts`: from the client (TV1), or from
\* a leader on the client's behalf (TV2, `reply` goes to the leader).
\* @type: ($msg, Set(Int), $msg) => Bool;
TcAddPartitions(m, parts, reply) ==
    LET t == m.tid
        c == tc[t]
    IN CASE m.epoch # c.epoch /\ Rotating(t, m.epoch) ->
              \* the new producer id, before the rotation completed: wait (KAFKA-18660's
              \* second fix; before it, INVALID_PRODUCER_ID_MAPPING fenced the producer)
              TcReplyNow(m, [reply EXCEPT !.err = "CONCURRENT_TRANSACTIONS"])
         [] m.epoch # c.epoch ->
              TcReplyNow(m, [reply EXCEPT !.err = IF m.epoch < c.epoch THEN FencedError(m.epoch, c.epoch)
                                                  ELSE IF PidOf(m.epoch) # PidOf(c.epoch) THEN "INVALID_PRODUCER_ID_MAPPING"
                                                  ELSE "INVALID_PRODUCER_EPOCH"])
         [] Busy(t) \/ c.st \in {"PrepareCommit", "PrepareAbort"} ->
              TcReplyNow(m, [reply EXCEPT !.err = "CONCURRENT_TRANSACTIONS"])
         [] c.st = "Ongoing" /\ parts \subseteq c.parts ->
              TcReplyNow(m, reply)
         [] OTHER ->
              /\ tc' = [tc EXCEPT ![t] = Pending(t, [st |-> "Ongoing", epoch |-> c.epoch, parts |-> c.parts \cup parts,
                                                     gtx |-> IF c.st = "Ongoing" THEN c.gtx ELSE m.gtx, endBy |-> NoGtx, last |-> c.last],
                                                 {reply})]
              /\ net' = net \ {m}

\* @type: ($msg) => Bool;
TcAddPartitionsToTxn(m) ==
    /\ m \in net /\ m.type = "AddPartitionsToTxn"
    \* the fixed program adds every partition; an open client names one (OpenRequest)
    /\ TcAddPartitions(m, IF OpenClients THEN {m.part} ELSE Parts, Reply(m, "NONE"))
    /\ action' = On(m.tid, Act("TcAddPartitionsToTxn", "coordinator", "instance" :> m.inst @@ "txn" :> m.gtx[3] @@ "epoch" :> m.epoch))
    /\ UNCHANGED <<clientVars, tlogVars, cepochVars, leaderVars, groupVars, faultVars>>

\* AddOffsetsToTxn: adds the group's offsets partition to the transaction.
\* @type: ($msg) => Bool;
TcAddOffsetsToTxn(m) ==
    /\ m \in net /\ m.type = "AddOffsetsToTxn"
    /\ TcAddPartitions(m, {OffsetsPart}, Reply(m, "NONE"))
    /\ action' = On(m.tid, Act("TcAddOffsetsToTxn", "coordinator", "instance" :> m.inst @@ "txn" :> m.gtx[3] @@ "epoch" :> m.epoch))
    /\ UNCHANGED <<clientVars, tlogVars, cepochVars, leaderVars, groupVars, faultVars>>

\* TV1V: is partition m.part in the ongoing transaction of m's producer?
\* (handleVerifyPartitionsInTransaction: the pending state is not checked;
\* a partition not in the transaction is TRANSACTION_ABORTABLE.)
\* @type: ($msg) => Str;
VerifyOnly(m) ==
    LET c == tc[m.tid]
    IN CASE m.epoch # c.epoch -> FencedError(m.epoch, c.epoch)
         \* KAFKA-14904 (apache/kafka#13579): verification used to share
         \* AddPartitionsToTxn's checks, pending transition included
         [] Bug("verify_checks_pending") /\ c.pending # <<>> -> "CONCURRENT_TRANSACTIONS"
         [] c.st \in {"PrepareCommit", "PrepareAbort"} -> "CONCURRENT_TRANSACTIONS"
         [] c.st = "Ongoing" /\ m.part \in c.parts -> "NONE"
         [] OTHER -> "TRANSACTION_ABORTABLE"

\* A leader asks before appending m's batch, or the group coordinator before
\* writing m's offsets (m.part = OffsetsPart): TV2, to add partition m.part;
\* TV1V, whether it is in the transaction.
\* @type: ($msg) => Bool;
TcVerify(m) ==
    /\ m \in net /\ m.type = "Verify"
    /\ IF TV2 THEN TcAddPartitions(m, {m.part}, Reply(m, "NONE"))
       ELSE TcReplyNow(m, Reply(m, VerifyOnly(m)))
    /\ action' = On(m.tid, Act("TcVerify", "coordinator", "instance" :> m.inst @@ "txn" :> m.gtx[3] @@ "part" :> m.part @@ "epoch" :> m.epoch))
    /\ UNCHANGED <<clientVars, tlogVars, cepochVars, leaderVars, groupVars, faultVars>>

\* Kafka 4.x, TV2 (KAFKA-14563, apache/kafka#17698): an EndTxn(abort) at the
\* current epoch while no transaction is open (Empty, CompleteCommit,
\* CompleteAbort) is not an error: the coordinator bumps the epoch and logs
\* PrepareAbort with no partitions, so a batch of the old epoch that is still
\* on its way is refused when its leader asks to add the partition.
\* Before 4.0 ("tv2_endtxn_before_4_0") it was INVALID_TXN_STATE.
\* @type: (Str) => Bool;
AbortBumps(t) == TV2 /\ ~Bug("tv2_endtxn_before_4_0") /\ tc[t].st \in {"Empty", "CompleteCommit", "CompleteAbort"}

\* Is an EndTxn with epoch e a valid request in state s (TransactionCoordinator.endTransaction)?
\* TV1: the epoch must be the current one. TV2: every EndTxn bumped the
\* epoch, so a retry of the EndTxn that did so carries epoch - 1.
\* @type: (Str, Int) => Bool;
EndTxnEpochValid(t, e) ==
    LET c == tc[t]
    IN IF ~TV2 THEN e = c.epoch
       ELSE IF c.st \in {"Ongoing", "Empty"} THEN e = c.epoch
       ELSE IF AbortBumps(t) /\ e = c.epoch THEN TRUE
       ELSE \/ e + 1 = c.epoch
            \* retryOnOverflow: the retry of the EndTxn that rotated the producer id
            \/ c.st \in {"CompleteCommit", "CompleteAbort"} /\ EpochOf(c.epoch) = 0
               /\ PidOf(e) + 1 = PidOf(c.epoch) /\ EpochOf(e) = MaxEpoch - 1


\* EndTxn (TransactionCoordinator.handleEndTransaction).
\* @type: ($msg) => Bool;
TcEndTxn(m) ==
    /\ m \in net /\ m.type = "EndTxn"
    /\ LET t == m.tid
           c == tc[t]
           done == IF m.commit THEN "CompleteCommit" ELSE "CompleteAbort"
           prep == IF m.commit THEN "PrepareCommit" ELSE "PrepareAbort"
           newEpoch == IF TV2 THEN c.epoch + 1 ELSE c.epoch
           \* TV2: the epoch the client goes on with. At MaxEpoch the producer id
           \* rotates: the markers carry MaxEpoch, the client gets the new id at
           \* epoch 0 (KAFKA-18660: it got the old id and MaxEpoch).
           given == IF TV2 /\ EpochOf(newEpoch) = MaxEpoch /\ ~Bug("tv2_overflow_wrong_pid")
                    THEN NewPid(c.epoch) ELSE newEpoch
       IN CASE ~EndTxnEpochValid(t, m.epoch) ->
                 TcReplyNow(m, Reply(m, FencedError(m.epoch, c.epoch)))
            [] Busy(t) ->
                 TcReplyNow(m, Reply(m, "CONCURRENT_TRANSACTIONS"))
            [] TV2 /\ EpochOf(c.epoch) = MaxEpoch /\ (c.st = "Ongoing" \/ (~m.commit /\ AbortBumps(t) /\ m.epoch = c.epoch)) ->
                 \* the bump would overflow (prepareAbortOrCommit: an illegal epoch)
                 TcReplyNow(m, Reply(m, "UNKNOWN_SERVER_ERROR"))
            [] c.st = "Ongoing" ->
                 /\ tc' = [tc EXCEPT ![t] = Pending(t, [st |-> prep, epoch |-> newEpoch, parts |-> c.parts,
                                                        gtx |-> c.gtx, endBy |-> m.gtx, last |-> c.last],
                                                    {[Reply(m, "NONE") EXCEPT !.epoch = given]})]
                 /\ net' = net \ {m}
            [] ~m.commit /\ AbortBumps(t) /\ m.epoch = c.epoch ->
                 \* 4.x: abort what may still arrive (no partitions yet: no markers)
                 /\ tc' = [tc EXCEPT ![t] = Pending(t, [st |-> "PrepareAbort", epoch |-> c.epoch + 1, parts |-> {},
                                                        gtx |-> m.gtx, endBy |-> m.gtx, last |-> c.last],
                                                    {[Reply(m, "NONE") EXCEPT !.epoch = given]})]
                 /\ net' = net \ {m}
            [] c.st = done ->
                 TcReplyNow(m, [Reply(m, "NONE") EXCEPT !.epoch = c.epoch])
            [] c.st = prep ->
                 TcReplyNow(m, Reply(m, "CONCURRENT_TRANSACTIONS"))
            [] OTHER ->
                 TcReplyNow(m, Reply(m, "INVALID_TXN_STATE"))
    /\ action' = On(m.tid, Act("TcEndTxn", "coordinator", "instance" :> m.inst @@ "txn" :> m.gtx[3] @@ "epoch" :> m.epoch
                                       @@ "commit" :> (IF m.commit THEN 1 ELSE 0)))
    /\ UNCHANGED <<clientVars, tlogVars, cepochVars, leaderVars, groupVars, faultVars>>

\* The markers for the transaction described by `entry`, one per partition.
\* @type: (Str, $tentry, Int) => Set($msg);
Markers(t, entry, ce) ==
    { [NoMsg EXCEPT !.type = "WriteTxnMarkers", !.tid = t, !.epoch = entry.epoch, !.part = p,
                    !.commit = (entry.st = "PrepareCommit"), !.cepoch = ce, !.gtx = entry.gtx, !.endBy = entry.endBy] :
      p \in entry.parts }

\* The entry of a failed append that "append_fail_keeps_pending" keeps pending.
FailedSt == "AppendFailed"

\* Is `entry` the abort of a fence (by an InitProducerId or a timeout)?
\* @type: (Str, $tentry) => Bool;
IsFenceEntry(t, entry) == entry.st = "PrepareAbort" /\ (IsFence(entry.endBy) \/ entry.endBy = TimeoutGtx(t))

\* The pending transition reaches __transaction_state: apply it, answer,
\* and once PrepareCommit/PrepareAbort is durable, send the markers.
\* @type: (Str) => Bool;
TcAppend(t) ==
    /\ tc[t].pending # <<>>
    /\ Head(tc[t].pending).entry.st # FailedSt
    /\ LET e == Head(tc[t].pending).entry
           prepared == e.st \in {"PrepareCommit", "PrepareAbort"}
       IN /\ tlog' = [tlog EXCEPT ![t] = Append(@, e)]
          /\ tc' = [tc EXCEPT ![t] = [st |-> e.st, epoch |-> e.epoch, parts |-> e.parts, gtx |-> e.gtx, endBy |-> e.endBy, last |-> e.last,
                                      todo |-> IF prepared THEN e.parts ELSE {},
                                      pending |-> Tail(tc[t].pending)]]
          /\ net' = net \cup Head(tc[t].pending).replies \cup (IF prepared THEN Markers(t, e, cepoch) ELSE {})
          /\ action' = On(t, Act("TcAppend", "coordinator", "epoch" :> e.epoch))
    /\ UNCHANGED <<clientVars, cepochVars, leaderVars, groupVars, faultVars>>

\* The append of the head pending transition to __transaction_state fails
\* without a failover (its partition lost its in-sync replicas, or the write
\* timed out), at most MaxAppendFails times. Kafka resets the pending state
\* and answers the waiting request with a retriable error
\* (TransactionStateManager.appendTransactionToLog: NOT_ENOUGH_REPLICAS and
\* REQUEST_TIMED_OUT become COORDINATOR_NOT_AVAILABLE); the client sends it
\* again. KAFKA-5351 ("append_fail_keeps_pending"): the pending state was not
\* reset, so every later request of the transactional id got
\* CONCURRENT_TRANSACTIONS, for ever.
\* @type: (Str) => Bool;
TcAppendFail(t) ==
    /\ appendFails < MaxAppendFails
    /\ tc[t].pending # <<>>
    /\ Head(tc[t].pending).entry.st # FailedSt
    /\ LET head == Head(tc[t].pending)
       IN /\ net' = net \cup {[r EXCEPT !.err = "COORDINATOR_NOT_AVAILABLE"] : r \in head.replies}
          /\ tc' = [tc EXCEPT ![t].pending =
                      IF Bug("append_fail_keeps_pending")
                      THEN <<[entry |-> [head.entry EXCEPT !.st = FailedSt], replies |-> {}]>> \o Tail(@)
                      ELSE Tail(@),
                    \* KAFKA-9666: the failed fence's epoch bump stays in memory
                    ![t].epoch = IF Bug("fence_bump_on_failed_append") /\ IsFenceEntry(t, head.entry)
                                 THEN head.entry.epoch ELSE @]
    /\ appendFails' = appendFails + 1
    /\ action' = On(t, ActNote("TcAppendFail", "coordinator", NoArgs, "COORDINATOR_NOT_AVAILABLE"))
    /\ UNCHANGED <<clientVars, tlogVars, cepochVars, leaderVars, groupVars, hangVars, retryVars, lossVars, failoverVars>>

\* A partition acknowledged its marker.
\* @type: ($msg) => Bool;
TcMarkerAck(m) ==
    /\ m \in net /\ m.type = "WriteTxnMarkersResp"
    /\ net' = net \ {m}
    /\ tc' = IF m.cepoch = cepoch /\ tc[m.tid].st \in {"PrepareCommit", "PrepareAbort"} /\ m.epoch = tc[m.tid].epoch
             THEN [tc EXCEPT ![m.tid].todo = @ \ {m.part}]
             ELSE tc   \* an answer to an earlier coordinator epoch or transaction: ignored
    /\ action' = On(m.tid, Act("TcMarkerAck", "coordinator", "part" :> m.part @@ "cepoch" :> m.cepoch))
    /\ UNCHANGED <<clientVars, tlogVars, cepochVars, leaderVars, groupVars, faultVars>>

\* The generation CompleteCommit / CompleteAbort is logged with. TV2: a
\* transaction ended at MaxEpoch completes with the next producer id at
\* epoch 0 (prepareComplete); "fence_no_rotation" (KAFKA-20090): not when
\* the abort was a fence.
\* @type: (Str) => Int;
CompleteEpoch(t) ==
    IF TV2 /\ EpochOf(tc[t].epoch) = MaxEpoch
       /\ ~(Bug("fence_no_rotation") /\ IsFenceEntry(t, [st |-> tc[t].st, epoch |-> tc[t].epoch, parts |-> tc[t].parts,
                                                         gtx |-> tc[t].gtx, endBy |-> tc[t].endBy, last |-> tc[t].last]))
    THEN NewPid(tc[t].epoch) ELSE tc[t].epoch

\* Every marker is written: log CompleteCommit / CompleteAbort.
\* @type: (Str) => Bool;
TcComplete(t) ==
    /\ tc[t].st \in {"PrepareCommit", "PrepareAbort"}
    /\ tc[t].todo = {}
    /\ tc[t].pending = <<>>
    /\ tc' = [tc EXCEPT ![t] = Pending(t, [st |-> IF tc[t].st = "PrepareCommit" THEN "CompleteCommit" ELSE "CompleteAbort",
                                           epoch |-> CompleteEpoch(t), parts |-> {}, gtx |-> tc[t].gtx, endBy |-> tc[t].endBy,
                                           last |-> tc[t].last],
                                       {})]
    /\ action' = On(t, Act("TcComplete", "coordinator", NoArgs))
    /\ UNCHANGED <<netVars, clientVars, tlogVars, cepochVars, leaderVars, groupVars, faultVars>>

\* The transaction timed out (transaction.timeout.ms): the coordinator aborts
\* it on its own (TransactionCoordinator.abortTimedOutTransactions: it fences
\* the producer epoch with PrepareEpochFence, then ends the transaction as
\* an abort). As for a fence by InitProducerId, the two steps are one here:
\* PrepareAbort is logged with the epoch bumped (TV2: bumped once more, as by
\* every EndTxn), so the client's next request is refused and late batches
\* of the old epoch are fenced at their leaders.
\* @type: (Str) => Bool;
TcTimeoutAbort(t) ==
    /\ TxnTimeouts
    /\ tc[t].st = "Ongoing" /\ ~Busy(t)
    \* before KAFKA-20090 the fence threw at MaxEpoch: the timeout never aborts
    /\ ~(Bug("fence_bump_on_failed_append") /\ EpochOf(tc[t].epoch) = MaxEpoch)
    /\ tc' = [tc EXCEPT ![t] = Pending(t, [st |-> "PrepareAbort", epoch |-> FenceEpoch(tc[t].epoch),
                                           parts |-> tc[t].parts, gtx |-> tc[t].gtx, endBy |-> TimeoutGtx(t), last |-> tc[t].last],
                                       {})]
    /\ action' = On(t, Act("TcTimeoutAbort", "coordinator", "epoch" :> tc[t].epoch))
    /\ UNCHANGED <<netVars, clientVars, tlogVars, cepochVars, leaderVars, groupVars, faultVars>>

\* The coordinator fails over: a new one (coordinator epoch + 1) loads
\* __transaction_state; in-memory state and pending appends are lost; the
\* markers of prepared transactions are sent again.
Failover ==
    /\ failovers < MaxFailovers
    /\ failovers' = failovers + 1
    /\ cepoch' = cepoch + 1
    /\ tc' = [t \in TxnIds |->
                IF TlogLen(t) = 0 THEN FreshCoord
                ELSE LET e == Tlog(t)[TlogLen(t)]
                     IN [st |-> e.st, epoch |-> e.epoch, parts |-> e.parts, gtx |-> e.gtx, endBy |-> e.endBy, last |-> e.last,
                         todo |-> IF e.st \in {"PrepareCommit", "PrepareAbort"} THEN e.parts ELSE {},
                         pending |-> <<>>]]
    /\ net' = net \cup UNION { IF TlogLen(t) # 0 /\ Tlog(t)[TlogLen(t)].st \in {"PrepareCommit", "PrepareAbort"}
                                THEN Markers(t, Tlog(t)[TlogLen(t)], cepoch + 1) ELSE {} : t \in TxnIds }
    /\ action' = Act("Failover", "coordinator", "cepoch" :> cepoch + 1)
    /\ UNCHANGED <<clientVars, tlogVars, leaderVars, groupVars, hangVars, retryVars, lossVars, appendFailVars>>

-----------------------------------------------------------------------------
(* Partition leaders *)

\* The leader's check of a produce request against producer state s
\* (ProducerAppendInfo): "append", "duplicate", or an error code.
\* @type: ($msg, $pstate) => Str;
ProduceCheck(m, s) ==
    CASE m.epoch < s.epoch -> "INVALID_PRODUCER_EPOCH"
      [] Bug("no_idempotence") -> "append"
      [] m.epoch = s.epoch /\ m.seq \in s.seqs -> "duplicate"
      \* KAFKA-14920 (apache/kafka#14033): while a verification is under way
      \* for the producer, nothing above the lowest sequence it has seen is
      \* appended (VerificationStateEntry.lowestSequence), so a batch sent
      \* after one whose verification failed cannot overtake it
      [] s.vseq # -1 /\ m.seq > s.vseq -> "OUT_OF_ORDER_SEQUENCE_NUMBER"
      \* a new epoch starts at sequence 0, but with no producer state (never
      \* written, or expired) any sequence is taken (ProducerAppendInfo.checkSequence)
      [] m.epoch > s.epoch -> IF m.seq = 0 \/ s.epoch = -1 THEN "append" ELSE "OUT_OF_ORDER_SEQUENCE_NUMBER"
      [] m.seq = s.lastSeq + 1 -> "append"
      [] OTHER -> "OUT_OF_ORDER_SEQUENCE_NUMBER"

\* The verification state of producer state s once a batch of generation e
\* and sequence q starts its verification (ProducerStateManager.
\* maybeCreateVerificationStateEntry): it keeps the lowest sequence of the
\* newest epoch it has seen. It lives in the leader's memory until the
\* producer's next transactional append or marker. Before KAFKA-14920's fix
\* ("no_lowest_sequence") it kept no sequence.
\* @type: ($pstate, Int, Int) => $pstate;
StartVerification(s, e, q) ==
    IF Bug("no_lowest_sequence") THEN s
    ELSE IF s.vseq = -1 \/ e > s.vepoch \/ (e = s.vepoch /\ q < s.vseq) THEN [s EXCEPT !.vepoch = e, !.vseq = q]
    ELSE s

\* The sequences of the last five batches, for duplicate detection. A
\* duplicate is answered NONE with the original offset, and not appended.
\* @type: (Set(Int), Int) => Set(Int);
Remember(seqs, s) == {x \in seqs \cup {s} : x > s - 5}

\* @type: (Str) => Str;
ProduceError(verdict) == IF verdict \in {"append", "duplicate"} THEN "NONE" ELSE verdict

\* Check m's batch, append it if it passes, answer the client; `consumed`
\* are the messages this step takes off the network.
\* @type: ($msg, Set($msg)) => Bool;
AppendBatch(m, consumed) ==
    LET p == m.part
        s == pst[p][m.tid]
        verdict == ProduceCheck(m, s)
    IN /\ plog' = IF verdict = "append"
                  THEN [plog EXCEPT ![p] = Append(@, [kind |-> "data", pid |-> m.tid, epoch |-> m.epoch, seq |-> m.seq,
                                                      commit |-> FALSE, cepoch |-> -1, gtx |-> m.gtx, endBy |-> NoGtx,
                                                      zombie |-> m.inst # LatestInstance(m.tid), src |-> m.val])]
                  ELSE plog
       /\ pst' = IF verdict = "append"
                 THEN [pst EXCEPT ![p][m.tid] = [epoch |-> m.epoch, lastSeq |-> m.seq, open |-> TRUE, cepoch |-> s.cepoch,
                                                 seqs |-> IF m.epoch > s.epoch THEN {m.seq} ELSE Remember(s.seqs, m.seq),
                                                 from |-> s.from, vepoch |-> -1, vseq |-> -1]]
                 ELSE pst
       /\ net' = (net \ consumed) \cup {Reply(m, ProduceError(verdict))}

\* Pipelining: is m the next request on its connection? Nothing sent
\* before it on the same connection is still unread or being handled
\* (held for verification).
\* @type: ($msg) => Bool;
ConnectionReady(m) ==
    Pipelined =>
        /\ ~\E n \in net : n.type = "Produce" /\ n.tid = m.tid /\ n.inst = m.inst /\ n.part = m.part /\ n.att < m.att
        /\ ~\E h \in held[m.part] : h.m.tid = m.tid /\ h.m.inst = m.inst

\* A produce request reaches its leader. TV1, or TV2 with the producer's
\* transaction already open here under this epoch: check and append. TV2
\* otherwise: hold the batch and ask the coordinator to add the partition.
\* @type: ($msg) => Bool;
LeaderProduce(m) ==
    /\ m \in net /\ m.type = "Produce"
    /\ ConnectionReady(m)
    /\ LET s == pst[m.part][m.tid]
       IN IF Verifies /\ ~(s.open /\ s.epoch = m.epoch) /\ m.epoch >= s.epoch
          THEN /\ held' = [held EXCEPT ![m.part] = @ \cup {[m |-> m, void |-> FALSE]}]
               /\ net' = (net \ {m}) \cup {[m EXCEPT !.type = "Verify"]}
               /\ pst' = [pst EXCEPT ![m.part][m.tid] = StartVerification(s, m.epoch, m.seq)]
               /\ UNCHANGED plogVars
          ELSE /\ AppendBatch(m, {m})
               /\ UNCHANGED heldVars
    /\ action' = On(m.tid, Act("LeaderProduce", "leader", "part" :> m.part @@ "instance" :> m.inst @@ "txn" :> m.gtx[3]
                                            @@ "epoch" :> m.epoch @@ "seq" :> m.seq))
    /\ UNCHANGED <<clientVars, coordVars, lagVars, groupVars, faultVars>>

\* TV2: the coordinator answered the verification of a held batch. Append
\* it, unless a marker for its producer arrived meanwhile (Kafka's
\* VerificationGuard: INVALID_TXN_STATE) or the coordinator refused. A
\* retriable refusal (CONCURRENT_TRANSACTIONS: the previous transaction is
\* still writing its markers) reaches the producer as NOT_ENOUGH_REPLICAS,
\* which makes it send the batch again (ReplicaManager's
\* postVerificationCallback translates it so that every client retries).
\* @type: ($msg) => Str;
VerifyError(r) ==
    CASE r.err = "NONE" -> "INVALID_TXN_STATE"
      [] r.err \in {"CONCURRENT_TRANSACTIONS", "COORDINATOR_NOT_AVAILABLE"} -> "NOT_ENOUGH_REPLICAS"
      [] OTHER -> r.err

\* @type: ($msg) => Bool;
LeaderVerified(r) ==
    /\ r \in net /\ r.type = "VerifyResp" /\ r.part \in Parts
    /\ \E h \in held[r.part] :
        /\ h.m.tid = r.tid /\ h.m.inst = r.inst /\ h.m.gtx = r.gtx /\ h.m.seq = r.seq /\ h.m.epoch = r.epoch /\ h.m.att = r.att
        /\ held' = [held EXCEPT ![r.part] = @ \ {h}]
        /\ IF r.err = "NONE" /\ ~h.void
           THEN AppendBatch(h.m, {r})
           ELSE /\ net' = (net \ {r}) \cup {Reply(h.m, VerifyError(r))}
                /\ UNCHANGED <<plogVars, pstVars>>
        /\ action' = On(r.tid, Act("LeaderVerified", "leader", "part" :> r.part @@ "txn" :> r.gtx[3]
                                                 @@ "ok" :> (IF r.err = "NONE" /\ ~h.void THEN 1 ELSE 0)))
    /\ UNCHANGED <<clientVars, coordVars, lagVars, groupVars, faultVars>>

\* TV2: a coordinator failover lost the verification of held batch h (its
\* pending answer died with the old coordinator): the produce fails with a
\* retriable error and the producer sends the batch again (NOT_COORDINATOR
\* from the coordinator becomes NOT_ENOUGH_REPLICAS, as in ReplicaManager).
\* @type: (Int) => Bool;
LeaderVerifyLost(p) ==
    \E h \in held[p] :
        /\ ~\E n \in net : n.type \in {"Verify", "VerifyResp"} /\ n.tid = h.m.tid /\ n.inst = h.m.inst /\ n.gtx = h.m.gtx
                          /\ n.seq = h.m.seq /\ n.epoch = h.m.epoch /\ n.att = h.m.att /\ n.part = p
        /\ ~\E k \in DOMAIN tc[h.m.tid].pending : \E n \in tc[h.m.tid].pending[k].replies :
                n.type = "VerifyResp" /\ n.inst = h.m.inst /\ n.gtx = h.m.gtx /\ n.part = p /\ n.att = h.m.att
        /\ held' = [held EXCEPT ![p] = @ \ {h}]
        /\ net' = net \cup {Reply(h.m, "NOT_ENOUGH_REPLICAS")}
        /\ action' = On(h.m.tid, ActNote("LeaderVerifyLost", "leader", "part" :> p @@ "txn" :> h.m.gtx[3], "NOT_ENOUGH_REPLICAS"))
    /\ UNCHANGED <<clientVars, coordVars, plogVars, pstVars, lagVars, groupVars, faultVars>>

\* An answer to a verification whose batch was already dealt with (a
\* retried produce asked twice): nothing waits for it. (The offsets
\* partition's answers are GcVerified's.)
\* @type: ($msg) => Bool;
LeaderDiscardVerify(r) ==
    /\ r \in net /\ r.type = "VerifyResp" /\ r.part \in Parts
    /\ ~\E h \in held[r.part] : h.m.tid = r.tid /\ h.m.inst = r.inst /\ h.m.gtx = r.gtx /\ h.m.seq = r.seq /\ h.m.epoch = r.epoch /\ h.m.att = r.att
    /\ net' = net \ {r}
    /\ action' = On(r.tid, Act("LeaderDiscardVerify", "leader", "part" :> r.part @@ "txn" :> r.gtx[3]))
    /\ UNCHANGED <<clientVars, coordVars, leaderVars, groupVars, faultVars>>

\* A WriteTxnMarkers request reaches the leader of its partition: a marker
\* from an older coordinator epoch, or for an older producer epoch, is
\* refused; otherwise the control record is appended, closing the
\* producer's transaction on this partition.
\* @type: ($msg) => Bool;
LeaderMarker(m) ==
    /\ m \in net /\ m.type = "WriteTxnMarkers" /\ m.part \in Parts
    /\ LET p == m.part
           s == pst[p][m.tid]
           err == MarkerCheck(m, s)
       IN /\ IF err = "NONE"
             THEN /\ plog' = [plog EXCEPT ![p] = Append(@, [kind |-> "marker", pid |-> m.tid, epoch |-> m.epoch, seq |-> -1,
                                                              commit |-> m.commit, cepoch |-> m.cepoch, gtx |-> m.gtx,
                                                              endBy |-> m.endBy, zombie |-> FALSE, src |-> 0])]
                  /\ pst' = [pst EXCEPT ![p][m.tid] =
                                [epoch |-> m.epoch, open |-> FALSE, cepoch |-> m.cepoch,
                                 lastSeq |-> IF m.epoch > s.epoch THEN -1 ELSE s.lastSeq,
                                 seqs |-> IF m.epoch > s.epoch THEN {} ELSE s.seqs, from |-> s.from,
                                 vepoch |-> -1, vseq |-> -1]]
                  /\ held' = [held EXCEPT ![p] = {IF h.m.tid = m.tid THEN [h EXCEPT !.void = TRUE] ELSE h : h \in @}]
             ELSE UNCHANGED leaderVars
          /\ net' = (net \ {m}) \cup {Reply(m, err)}
    /\ action' = On(m.tid, Act("LeaderMarker", "leader", "part" :> m.part @@ "epoch" :> m.epoch @@ "cepoch" :> m.cepoch
                                           @@ "commit" :> (IF m.commit THEN 1 ELSE 0)))
    /\ UNCHANGED <<clientVars, coordVars, lagVars, groupVars, faultVars>>

\* The producer state of t that a leader rebuilds from `log` when it loads
\* the partition (ProducerStateManager: snapshot plus replay of the log),
\* from the entries after index `from` (where t's state last expired; 0:
\* never): the epoch of t's last entry (epochs never go back), the
\* sequence of its last batch of that epoch, whether its last entry is a
\* batch (a transaction is open), and the coordinator epoch of its last
\* marker. A snapshot keeps one batch per producer
\* (ProducerStateManager.writeSnapshot: ProducerSnapshotEntry has one
\* lastSequence), so after a restart only a retry of the last batch is
\* recognised as a duplicate; the in-memory state remembers five. The
\* verification state is memory only and is lost. Abstraction: the
\* snapshot a restart loads is taken at the log end (a clean shutdown;
\* after a crash Kafka replays the log from an older snapshot and may
\* remember more), and after the expiry, so an expired producer stays
\* forgotten.
\* (LoadedProducerStateKnowing is LoadedProducerState knowing of some
\* epochs that t has no record of them in the log: MayHave(e) is FALSE only
\* for such an epoch, whose search is then skipped. The trace checker knows
\* them from its index of the log, KafkaTxnProperties:
\* ProducerStateInLogSinceIndexed; a search for an epoch with no record
\* reads back to `from`.)
\* @type: (Seq($entry), Str, Int, Int => Bool) => $pstate;
LoadedProducerStateKnowing(log, t, from, MayHave(_)) ==
    \* (Searched from the log end back: linear in what it reads, where the
    \* first form, MCKafkaTxn's LoadedProducerStateBySets, read every entry.)
    LET last == IF from >= Len(log) THEN from ELSE LastUpTo(from + 1, Len(log), LAMBDA i : log[i].pid = t)
    IN IF last <= from THEN [FreshProducerState[t] EXCEPT !.from = from]
       ELSE LET epoch == log[last].epoch
                cur == IF ~MayHave(epoch) THEN from
                       ELSE LastUpTo(from + 1, last, LAMBDA i : log[i].pid = t /\ IsData(log, i) /\ log[i].epoch = epoch)
                lastSeq == IF cur <= from THEN -1 ELSE log[cur].seq
                marker == LastUpTo(from + 1, last, LAMBDA i : log[i].pid = t /\ IsMarker(log, i))
            IN [epoch |-> epoch, lastSeq |-> lastSeq,
                seqs |-> IF cur <= from THEN {} ELSE {lastSeq},
                open |-> IsData(log, last),
                cepoch |-> IF marker <= from THEN -1 ELSE log[marker].cepoch,
                from |-> from, vepoch |-> -1, vseq |-> -1]

\* @type: (Seq($entry), Str, Int) => $pstate;
LoadedProducerState(log, t, from) == LoadedProducerStateKnowing(log, t, from, LAMBDA e : TRUE)

\* The produce requests and answers of partition p that die with their
\* connections when its leader goes away: with pipelining, those not yet
\* read (the client learns it from the closed connection and sends the
\* batches again, in sequence order). Without it, a request in flight is
\* taken to reach the new leader (a lost one is a Drop).
\* @type: (Int) => Set($msg);
ConnectionsLost(p) == IF Pipelined THEN {n \in net : n.type \in {"Produce", "ProduceResp"} /\ n.part = p} ELSE {}

\* The leader of partition p crashes and restarts (or another replica takes
\* over with the same log): it rebuilds its producer state from the log;
\* batches it held for verification are lost with its memory (their
\* producers get no answer and retry), and so are the requests of
\* ConnectionsLost.
\* @type: (Int) => Bool;
LeaderRestart(p) ==
    /\ LeaderRestarts
    /\ pst' = [pst EXCEPT ![p] = [t \in TxnIds |-> IF Bug("restart_forgets_producers") THEN FreshProducerState[t]
                                                   ELSE LoadedProducerState(Plog(p), t, pst[p][t].from)]]
    /\ held' = [held EXCEPT ![p] = {}]
    /\ net' = net \ ConnectionsLost(p)
    /\ action' = Act("LeaderRestart", "leader", "part" :> p)
    /\ UNCHANGED <<clientVars, coordVars, plogVars, lagVars, groupVars, faultVars>>

\* The follower of partition p stops replicating and leaves the ISR; the
\* leader goes on alone (min.insync.replicas = 1), so what it appends from
\* now on, markers included, is acknowledged with one copy.
\* @type: (Int) => Bool;
FollowerLag(p) ==
    /\ UncleanElections /\ lag[p] = -1
    /\ lag' = [lag EXCEPT ![p] = PlogLen(p)]
    /\ action' = Act("FollowerLag", "leader", "part" :> p @@ "offset" :> PlogLen(p))
    /\ UNCHANGED <<netVars, clientVars, coordVars, plogVars, pstVars, heldVars, groupVars, faultVars>>

\* unclean.leader.election.enable: the leader of p dies and its lagging
\* follower, out of the ISR, is elected. Its log is the prefix it had: what
\* was appended after it fell behind (data, markers) is gone, though it was
\* acknowledged. It rebuilds its producer state from that log; batches held
\* for verification are lost. KAFKA-20716 (apache/kafka#22937): a marker
\* lost this way leaves its transaction open on p for ever, and the LSO
\* stuck; Kafka documents that unclean election cannot keep exactly-once.
\* @type: (Int) => Bool;
UncleanElection(p) ==
    /\ lag[p] >= 0
    \* (the base is never cut: it ends at lag[p] or before)
    /\ LET kept == Joined(PlogBase[p], SubSeq(plog[p], 1, lag[p] - Len(PlogBase[p])))
       IN /\ plog' = [plog EXCEPT ![p] = SubSeq(@, 1, lag[p] - Len(PlogBase[p]))]
          /\ pst' = [pst EXCEPT ![p] = [t \in TxnIds |->
                        LoadedProducerState(kept, t, IF pst[p][t].from > lag[p] THEN lag[p] ELSE pst[p][t].from)]]
    /\ held' = [held EXCEPT ![p] = {}]
    /\ net' = net \ ConnectionsLost(p)
    /\ lag' = [lag EXCEPT ![p] = -2]
    /\ action' = Act("UncleanElection", "leader", "part" :> p @@ "offset" :> lag[p])
    /\ UNCHANGED <<clientVars, coordVars, groupVars, faultVars>>

\* With ProducerExpiry, a leader forgets a producer with no transaction open
\* here once producer.id.expiration.ms (a day by default) has passed since
\* its last append (ProducerStateManager.removeExpiredProducers; Kafka never
\* expires a producer with an ongoing transaction). Time is not modelled:
\* the expiry time is longer than any request lives (delivery.timeout.ms,
\* the transaction timeout), so nothing of the producer for this partition
\* may be under way: no produce or verification, no batch held, no marker
\* in flight or still to be sent. KAFKA-9144 ("early_producer_expiry"):
\* markers did not update the producer's timestamp, so a producer whose
\* last activity was a marker expired early, while markers of an older
\* coordinator could still arrive; with its coordinator epoch forgotten,
\* the leader takes such a stale marker (the coordinator epoch regresses).
\* @type: (Int, Str) => Bool;
LeaderExpireProducer(p, t) ==
    /\ ProducerExpiry
    /\ pst[p][t].epoch # -1 /\ ~pst[p][t].open
    /\ ~\E h \in held[p] : h.m.tid = t
    /\ ~\E m \in net : m.tid = t /\ m.part = p /\ m.type \in {"Produce", "Verify", "VerifyResp"}
    /\ ~\E i \in Instances : i[1] = t /\ cl[i].out /\ cl[i].req.type = "Produce" /\ cl[i].req.part = p
    /\ ~\E i \in Instances : i[1] = t /\ \E f \in cl[i].fly : f.part = p
    /\ \/ Bug("early_producer_expiry")
       \/ /\ ~\E m \in net : m.tid = t /\ m.part = p /\ m.type = "WriteTxnMarkers"
          /\ ~(tc[t].st \in {"PrepareCommit", "PrepareAbort"} /\ p \in tc[t].todo)
          /\ ~\E k \in DOMAIN tc[t].pending : p \in tc[t].pending[k].entry.parts
    /\ pst' = [pst EXCEPT ![p][t] = [FreshProducerState[t] EXCEPT !.from = PlogLen(p)]]
    /\ action' = On(t, Act("LeaderExpireProducer", "leader", "part" :> p))
    /\ UNCHANGED <<netVars, clientVars, coordVars, plogVars, heldVars, lagVars, groupVars, faultVars>>

\* The coordinator's marker channel re-sends a marker that got lost.
\* @type: (Str, Int) => Bool;
TcResendMarker(t, p) ==
    /\ tc[t].st \in {"PrepareCommit", "PrepareAbort"} /\ p \in tc[t].todo
    /\ LET ms == Markers(t, [st |-> tc[t].st, epoch |-> tc[t].epoch, parts |-> {p}, gtx |-> tc[t].gtx, endBy |-> tc[t].endBy,
                             last |-> tc[t].last], cepoch)
       IN /\ ~\E n \in net : n.type \in {"WriteTxnMarkers", "WriteTxnMarkersResp"} /\ n.tid = t /\ n.part = p /\ n.cepoch = cepoch
          /\ net' = net \cup ms
    /\ action' = On(t, Act("TcResendMarker", "coordinator", "part" :> p))
    /\ UNCHANGED <<clientVars, coordVars, leaderVars, groupVars, faultVars>>

-----------------------------------------------------------------------------
(* Consumers. A fetch changes no state, and the offsets that standalone    *)
(* consumers commit are read by no invariant, so model checking (Next)     *)
(* leaves them out. Traces include them (NextWithConsumers), so that what  *)
(* a consumer was given and what it committed can be checked.              *)

Isolations == {"read_committed", "read_uncommitted"}

\* The offsets (0-based, as Kafka numbers them) that a fetch of partition p
\* from offset `from` returns to a consumer with the given isolation level.
\* (Every producer of a partition log is a transactional.id of TxnIds.)
\* The last stable offset of partition p, as a 1-based index (KafkaLog's
\* LSOAmong: every producer of a partition log is a transactional.id of
\* TxnIds). Kafka keeps it from the producers' open transactions
\* (ProducerStateManager.firstUnstableOffset) rather than reading its log;
\* so may a trace check, from its index of the logs (KafkaTxnProperties:
\* PartitionLSOFromIndex; MCKafkaTxnForms' IndexMeans checks that the two
\* agree): a producer that has written nothing for long is looked for back
\* to the log's start here.
\* @type: (Int) => Int;
PartitionLSO(p) == LSOAmong(Plog(p), PlogLen(p), TxnIds)

\* @type: (Int, Str, Int) => Set(Int);
FetchResult(p, isolation, from) ==
    LET visible == IF isolation = "read_committed"
                   THEN ReadCommittedFetchBelow(Plog(p), from, Bug("lso_inclusive"), PartitionLSO(p))
                   ELSE {j \in (from + 1)..PlogLen(p) : IsData(Plog(p), j)}
    IN {i - 1 : i \in visible}

\* The last stable offset of partition p, 0-based (what ListOffsets answers
\* a read_committed consumer).
\* @type: (Int) => Int;
LastStableOffset(p) == PartitionLSO(p) - 1

\* A consumer fetches partition p from offset `from`.
\* @type: (Int, Str, Int) => Bool;
Fetch(p, isolation, from) ==
    /\ isolation \in Isolations
    /\ action' = ActNote("Fetch", "consumer", "part" :> p @@ "from" :> from, isolation)
    /\ UNCHANGED <<netVars, clientVars, coordVars, leaderVars, groupVars, faultVars>>

\* A standalone consumer (assign(), not a member of any generation) of
\* group g commits its position `offset` on partition p (OffsetCommit with
\* generation -1, which a group without members accepts). A position is
\* at most the log end: the consumer reached it by fetching.
\* @type: (Str, Int, Int) => Bool;
OffsetCommit(g, p, offset) ==
    /\ p \in Parts /\ offset \in 0..PlogLen(p)
    /\ gc' = [gc EXCEPT !.groups =
                (g :> ((p :> offset) @@ (IF g \in DOMAIN @ THEN @[g] ELSE [q \in {} |-> 0]))) @@ @]
    /\ action' = Act("OffsetCommit", "consumer", "part" :> p @@ "offset" :> offset)
    /\ UNCHANGED <<netVars, clientVars, coordVars, leaderVars, faultVars>>

-----------------------------------------------------------------------------
(* Open clients (OpenClients): real clients served by txconform serve     *)

\* The request types an open client sends to the transaction machinery.
OpenTypes == {"InitProducerId", "AddPartitionsToTxn", "Produce", "EndTxn", "AddOffsetsToTxn", "TxnOffsetCommit"}

\* A well-formed request of an open client: a known transactional.id,
\* instance and partition (data partitions for AddPartitionsToTxn and
\* Produce, the offsets partition otherwise), the ghost transaction of its
\* instance (txn 0 only for InitProducerId), no error, no coordinator epoch.
\* Nothing else is required: whatever a real client sends, the brokers must
\* answer as Kafka does.
\* @type: ($msg) => Bool;
OpenRequest(m) ==
    /\ m.type \in OpenTypes
    /\ m.tid \in TxnIds /\ m.inst \in 1..NumInstances
    /\ m.part \in (IF m.type \in {"AddPartitionsToTxn", "Produce"} THEN Parts ELSE {OffsetsPart})
    /\ m.gtx[1] = m.tid /\ m.gtx[2] = m.inst /\ m.gtx[3] >= 0
    /\ (m.gtx[3] = 0) = (m.type = "InitProducerId")
    /\ m.err = "NONE" /\ m.cepoch = -1 /\ m.endBy = NoGtx /\ m.att >= 0

\* The requests the model checker lets open clients send: every field from
\* a small range (trace validation takes the request from the trace).
\* @type: Set($msg);
OpenRequests ==
    IF ~OpenClients THEN {}
    ELSE {m \in [type: OpenTypes, tid: TxnIds, inst: 1..NumInstances, epoch: -1..1, part: {OffsetsPart} \cup Parts,
                 seq: -1..1, commit: BOOLEAN, cepoch: {-1}, gtx: TxnIds \X (1..NumInstances) \X (0..TxnsPerInstance),
                 endBy: {NoGtx}, att: {0}, err: {"NONE"}, val: {-1}, gen: {-1}] :
            /\ OpenRequest(m)
            /\ (m.type = "Produce") = (m.seq >= 0)
            /\ m.commit => m.type = "EndTxn"
            /\ m.type = "InitProducerId" => m.epoch = -1}

\* The messages an open client's answer may be among (none without open clients).
\* @type: Set($msg);
OpenNet == IF OpenClients THEN net ELSE {}

\* An open client sends request m (the server read it from a connection).
\* @type: ($msg) => Bool;
ClientSend(m) ==
    /\ OpenClients
    /\ OpenRequest(m)
    /\ net' = net \cup {m}
    /\ action' = On(m.tid, Act("ClientSend", "client", RequestArgs(m)))
    /\ UNCHANGED <<clientVars, coordVars, leaderVars, groupVars, faultVars>>

\* An answer is delivered to its open client (the server wrote it to the
\* connection).
\* @type: ($msg) => Bool;
ClientTake(m) ==
    /\ OpenClients
    /\ m \in net
    /\ m.type \in {ty \o "Resp" : ty \in OpenTypes}
    /\ net' = net \ {m}
    /\ action' = On(m.tid, Act("ClientTake", "client", "instance" :> m.inst @@ "txn" :> m.gtx[3]))
    /\ UNCHANGED <<clientVars, coordVars, leaderVars, groupVars, faultVars>>

-----------------------------------------------------------------------------
(* The network *)

\* The messages lost with m: with pipelining, a produce request or answer
\* is lost with its connection, and so is everything else on it.
\* @type: ($msg) => Set($msg);
LostWith(m) ==
    IF Pipelined /\ m.type \in {"Produce", "ProduceResp"}
    THEN {n \in net : n.type \in {"Produce", "ProduceResp"} /\ n.tid = m.tid /\ n.inst = m.inst /\ n.part = m.part}
    ELSE {m}

\* A message is lost. Verification traffic between brokers is not.
\* @type: ($msg) => Bool;
Drop(m) ==
    /\ m \in net /\ losses < MaxLoss
    /\ m.type \notin {"Verify", "VerifyResp"}
    /\ net' = net \ LostWith(m)
    /\ losses' = losses + 1
    /\ action' = On(m.tid, Act("Drop", "network", "instance" :> m.inst @@ "part" :> m.part @@ "txn" :> m.gtx[3]))
    /\ UNCHANGED <<clientVars, coordVars, leaderVars, groupVars, hangVars, retryVars, failoverVars, appendFailVars>>

\* Nothing left in flight and no transaction between prepare and complete,
\* of a network n and a coordinator c (the trace checker's forms pass them).
\* @type: (Set($msg), Str -> $coord) => Bool;
QuiescentIn(n, c) ==
    /\ ~\E m \in n : m.type \in {"WriteTxnMarkers", "WriteTxnMarkersResp"}
    /\ \A t \in TxnIds : c[t].pending = <<>> /\ c[t].st \notin {"PrepareCommit", "PrepareAbort"}

\* The same, of this state.
Quiescent == QuiescentIn(net, tc)

\* Every client is finished and nothing is in flight: an explicit end, so
\* that TLC's deadlock check still finds real deadlocks.
Finished ==
    /\ net = {}
    /\ Quiescent
    /\ \A p \in DOMAIN held : held[p] = {}
    /\ \A i \in Instances : cl[i].st \in {"done", "fenced", "failed", "down"} /\ ~cl[i].hung
    /\ UNCHANGED vars

Next ==
    \/ \E i \in Instances :
        \/ StartInstance(i) \/ BeginTxn(i) \/ SendRequest(i) \/ Retry(i) \/ ProduceTimeout(i)
        \/ ReInit(i) \/ Hang(i) \/ Resume(i) \/ JoinGroup(i) \/ FetchOffset(i) \/ InputDone(i)
        \/ \E m \in net : ClientReceive(i, m)
    \* open clients (without them, both sets are empty: one test per state)
    \/ \E m \in OpenRequests : ClientSend(m)
    \/ \E m \in OpenNet : ClientTake(m)
    \/ \E m \in net :
        \/ DiscardStale(m) \/ Drop(m)
        \/ TcInitProducerId(m) \/ TcAddPartitionsToTxn(m) \/ TcAddOffsetsToTxn(m) \/ TcVerify(m) \/ TcEndTxn(m)
        \/ TcMarkerAck(m) \/ GcOffsetFetch(m) \/ GcTxnOffsetCommit(m) \/ GcVerified(m) \/ GcMarker(m)
        \/ LeaderProduce(m) \/ LeaderVerified(m) \/ LeaderDiscardVerify(m) \/ LeaderMarker(m)
    \/ \E t \in TxnIds :
        \/ TcAppend(t) \/ TcAppendFail(t) \/ TcComplete(t) \/ TcTimeoutAbort(t)
        \/ \E p \in {OffsetsPart} \cup Parts : TcResendMarker(t, p)
    \/ \E p \in Parts : LeaderVerifyLost(p) \/ LeaderRestart(p) \/ \E t \in TxnIds : LeaderExpireProducer(p, t)
    \/ GcVerifyLost
    \/ \E p \in Parts : FollowerLag(p) \/ UncleanElection(p)
    \/ Failover
    \/ Finished

Spec == Init /\ [][Next]_vars

-----------------------------------------------------------------------------
(* Fairness, for the liveness properties (KafkaTxnProperties). The        *)
(* brokers' own steps are weakly fair, one kind of step at a time (so that *)
(* answering CONCURRENT_TRANSACTIONS forever cannot stand in for the      *)
(* append that ends the wait): a coordinator, leader or group coordinator *)
(* that can take a step eventually takes it. Faults (Drop, Failover,      *)
(* LeaderRestart, Hang, late retries, produce timeouts) are not fair: they *)
(* may happen or not. The timeout abort is fair (with TxnTimeouts): a     *)
(* transaction left open eventually times out. Clients may stop at any    *)
(* point (FairSpec); FairClientsSpec also makes every client go on with   *)
(* its program, including resuming after a hang and re-sending a request *)
(* that was lost.                                                          *)

BrokerFairness ==
    /\ WF_vars(\E m \in net : TcInitProducerId(m))
    /\ WF_vars(\E m \in net : TcAddPartitionsToTxn(m))
    /\ WF_vars(\E m \in net : TcAddOffsetsToTxn(m))
    /\ WF_vars(\E m \in net : TcVerify(m))
    /\ WF_vars(\E m \in net : TcEndTxn(m))
    /\ WF_vars(\E m \in net : TcMarkerAck(m))
    /\ WF_vars(\E m \in net : GcOffsetFetch(m) \/ GcTxnOffsetCommit(m) \/ GcMarker(m))
    /\ WF_vars(\E m \in net : GcVerified(m))
    /\ WF_vars(GcVerifyLost)
    /\ WF_vars(\E m \in net : LeaderProduce(m))
    /\ WF_vars(\E m \in net : LeaderVerified(m) \/ LeaderDiscardVerify(m))
    /\ WF_vars(\E m \in net : LeaderMarker(m))
    /\ WF_vars(\E p \in Parts : LeaderVerifyLost(p))
    /\ WF_vars(\E m \in net : DiscardStale(m))
    /\ \A t \in TxnIds :
        /\ WF_vars(TcAppend(t))
        /\ WF_vars(TcComplete(t))
        /\ WF_vars(TcTimeoutAbort(t))
        /\ WF_vars(\E p \in {OffsetsPart} \cup Parts : TcResendMarker(t, p))

\* Instance i goes on with its program.
\* @type: ($inst) => Bool;
ClientProgress(i) ==
    \/ StartInstance(i) \/ BeginTxn(i) \/ SendRequest(i) \/ ReInit(i) \/ Resume(i)
    \/ JoinGroup(i) \/ FetchOffset(i) \/ InputDone(i)
    \* a lost request is sent again (not a copy while one is in flight);
    \* a batch that left its connection is sent again or expires
    \/ Retry(i) /\ (cl'[i].fly = cl[i].fly => ~InFlight(cl[i].req))
    \/ ProduceTimeout(i) /\ cl'[i].fly # cl[i].fly
    \/ \E m \in net : ClientReceive(i, m)

ClientFairness == \A i \in Instances : WF_vars(ClientProgress(i))

FairSpec == Spec /\ BrokerFairness
FairClientsSpec == FairSpec /\ ClientFairness

\* Next with the consumers' steps, for traces: reads, and the commits of
\* standalone consumers in the groups G.
\* @type: (Set(Str)) => Bool;
NextWithConsumers(G) ==
    \/ Next
    \/ \E p \in Parts, iso \in Isolations : \E from \in 0..PlogLen(p) : Fetch(p, iso, from)
    \/ \E g \in G, p \in Parts : \E offset \in 0..PlogLen(p) : OffsetCommit(g, p, offset)

=============================================================================
