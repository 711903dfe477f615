----------------------------- MODULE Resharding -----------------------------
(***************************************************************************)
(* Moving messages from topic A to topic B exactly once ("resharding").    *)
(*                                                                         *)
(* Writers shard topic A (the source) by server; readers want topic B (the *)
(* target) sharded by key. Workers read each source partition from its     *)
(* committed read offset, route every message by its key to a target       *)
(* partition, and move the committed offset forward. The result must keep  *)
(* three promises:                                                         *)
(*   - locality: a message lands in the target partition its key routes to *)
(*     (true by construction here: Write uses Route);                      *)
(*   - ExactlyOnce: every message below the committed offset is in the     *)
(*     target exactly once, and no message is there twice;                 *)
(*   - OrderPreserved: messages of one source partition appear in each     *)
(*     target partition in their source order.                             *)
(*                                                                         *)
(* Three designs of the worker loop (constant Design):                     *)
(*   "naive"            read, write and wait for the ack, then commit the  *)
(*                      offset. A crash between the write and the offset   *)
(*                      commit makes the next attempt write a duplicate.   *)
(*   "txn_no_check"     the write and the offset move commit atomically in *)
(*                      one transaction. Crashes are harmless, but a worker *)
(*                      that hangs, loses its partition to another worker  *)
(*                      and resumes (a zombie) still commits what it read  *)
(*                      before: the message is written twice.              *)
(*   "txn_offset_check" as above, and the commit fails if the committed    *)
(*                      offset is no longer the one the transaction read   *)
(*                      (YDB checks the read offset ranges; Kafka checks   *)
(*                      the group generation since 3.7, KIP-447/KIP-890).  *)
(*                                                                         *)
(* Faults: a worker can crash at any point of an iteration and restart at  *)
(* once (its volatile state, and any open transaction, is lost); a worker  *)
(* can hang at any point and resume later; while it hangs the group can    *)
(* give its partitions to another worker (session timeout), and on resume  *)
(* it finishes the iteration it had started before it notices.             *)
(*                                                                         *)
(* Abstractions: one message per iteration (no batching); a message is     *)
(* identified by its source partition and offset and its key is derived    *)
(* from them (KeyOf); the brokers are reliable and their writes durable;   *)
(* the group's failure detector is the TakeOver action, enabled only when  *)
(* the owner hangs; MaxCrashes and MaxHangs bound the faults.              *)
(*                                                                         *)
(* The variable `action` records the last step and its parameters, so     *)
(* that traces read the same whichever engine found them; it is history    *)
(* only (no action reads it), and MCResharding's View leaves it out.       *)
(***************************************************************************)
EXTENDS Integers, Sequences, FiniteSets, TLC

CONSTANTS
    \* @type: Set(Str);
    Workers,
    \* @type: Int;
    NumSrc,
    \* @type: Int;
    NumDst,
    \* @type: Int;
    MsgsPerSrc,
    \* @type: Str;
    Design,
    \* @type: Int;
    MaxCrashes,
    \* @type: Int;
    MaxHangs

Designs == {"naive", "txn_no_check", "txn_offset_check"}

ASSUME /\ Design \in Designs
       /\ Workers # {}
       /\ NumSrc \in Nat \ {0} /\ NumDst \in Nat \ {0} /\ MsgsPerSrc \in Nat
       /\ MaxCrashes \in Nat /\ MaxHangs \in Nat

(*
  @typeAlias: msg = {src: Int, off: Int};
  @typeAlias: worker = {phase: Str, src: Int, off: Int, hung: Bool};
  @typeAlias: action = {name: Str, actor: Str, args: Str -> Int};
*)
Resharding_typedefs == TRUE

VARIABLES
    \* The visible content of each target partition.
    \* @type: Int -> Seq($msg);
    target,
    \* The committed read offset of each source partition (the consumer group's).
    \* @type: Int -> Int;
    committed,
    \* The worker the group currently assigns each source partition to.
    \* @type: Int -> Str;
    owner,
    \* Each worker's volatile state: where it is in its loop, the message it
    \* is moving, and whether it hangs.
    \* @type: Str -> $worker;
    wk,
    \* Faults so far.
    \* @type: Int;
    crashes,
    \* @type: Int;
    hangs,
    \* The last step, for readable traces (history only).
    \* @type: $action;
    action

\* The variables' groups, as etcd raft's spec groups its own: an action's UNCHANGED names
\* the groups it leaves alone. Each variable is a group of its own but the fault budgets.
targetVars == <<target>>
offsetVars == <<committed>>
ownerVars == <<owner>>
workerVars == <<wk>>
crashVars == <<crashes>>
hangVars == <<hangs>>
faultVars == <<crashVars, hangVars>>
historyVars == <<action>>
vars == <<targetVars, offsetVars, ownerVars, workerVars, faultVars, historyVars>>

SrcParts == 1..NumSrc
DstParts == 1..NumDst
Offsets == 0..(MsgsPerSrc - 1)

\* @type: (Int, Int) => $msg;
Msg(p, o) == [src |-> p, off |-> o]

Messages == [src: SrcParts, off: Offsets]

\* The key of the message at offset o of source partition p.
\* @type: (Int, Int) => Int;
KeyOf(p, o) == p + o

\* Locality: the target partition a key belongs to.
\* @type: (Int) => Int;
Route(k) == (k % NumDst) + 1

\* @type: (Int, Int) => Int;
Dest(p, o) == Route(KeyOf(p, o))

\* @type: $worker;
Idle == [phase |-> "idle", src |-> 0, off |-> 0, hung |-> FALSE]

\* @type: Str -> Int;
NoArgs == [k \in {} |-> 0]

\* @type: (Str, Str, Str -> Int) => $action;
Act(name, actor, args) == [name |-> name, actor |-> actor, args |-> args]

Transactional == Design # "naive"

-----------------------------------------------------------------------------

Init ==
    /\ target = [d \in DstParts |-> <<>>]
    /\ committed = [p \in SrcParts |-> 0]
    /\ owner \in [SrcParts -> Workers]   \* any initial assignment
    /\ wk = [w \in Workers |-> Idle]
    /\ crashes = 0
    /\ hangs = 0
    /\ action = Act("Init", "", NoArgs)

\* Worker w fetches the message at the committed offset of a source partition
\* it owns. In the transactional designs this also begins the transaction,
\* which remembers the offset it read.
\* @type: (Str, Int) => Bool;
Fetch(w, p) ==
    /\ ~wk[w].hung
    /\ wk[w].phase = "idle"
    /\ owner[p] = w
    /\ committed[p] < MsgsPerSrc
    /\ wk' = [wk EXCEPT ![w] = [phase |-> "fetched", src |-> p, off |-> committed[p], hung |-> FALSE]]
    /\ action' = Act("Fetch", w, "src" :> p @@ "off" :> committed[p])
    /\ UNCHANGED <<targetVars, offsetVars, ownerVars, faultVars>>

\* Worker w writes the message to the target partition its key routes to.
\* Naive: the write is acknowledged, durable and visible at once.
\* Transactional: the write is durable but invisible until the commit.
\* @type: (Str) => Bool;
Write(w) ==
    /\ ~wk[w].hung
    /\ wk[w].phase = "fetched"
    /\ LET p == wk[w].src
           o == wk[w].off
       IN /\ target' = IF Transactional THEN target
                       ELSE [target EXCEPT ![Dest(p, o)] = Append(@, Msg(p, o))]
          /\ action' = Act("Write", w, "src" :> p @@ "off" :> o @@ "dst" :> Dest(p, o))
    /\ wk' = [wk EXCEPT ![w].phase = "written"]
    /\ UNCHANGED <<offsetVars, ownerVars, faultVars>>

\* Naive design: once the write is acknowledged, commit the read offset.
\* @type: (Str) => Bool;
CommitOffset(w) ==
    /\ ~Transactional
    /\ ~wk[w].hung
    /\ wk[w].phase = "written"
    /\ committed' = [committed EXCEPT ![wk[w].src] = wk[w].off + 1]
    /\ wk' = [wk EXCEPT ![w] = Idle]
    /\ action' = Act("CommitOffset", w, "src" :> wk[w].src @@ "off" :> wk[w].off)
    /\ UNCHANGED <<targetVars, ownerVars, faultVars>>

\* Does the commit of a transaction that read offset o of partition p
\* conflict with what is committed now? Only txn_offset_check looks.
\* @type: (Int, Int) => Bool;
Conflict(p, o) == Design = "txn_offset_check" /\ committed[p] # o

\* Transactional designs: publish the write and move the offset, atomically.
\* @type: (Str) => Bool;
CommitTxn(w) ==
    /\ Transactional
    /\ ~wk[w].hung
    /\ wk[w].phase = "written"
    /\ LET p == wk[w].src
           o == wk[w].off
       IN /\ ~Conflict(p, o)
          /\ target' = [target EXCEPT ![Dest(p, o)] = Append(@, Msg(p, o))]
          /\ committed' = [committed EXCEPT ![p] = o + 1]
          /\ action' = Act("CommitTxn", w, "src" :> p @@ "off" :> o)
    /\ wk' = [wk EXCEPT ![w] = Idle]
    /\ UNCHANGED <<ownerVars, faultVars>>

\* txn_offset_check: the broker rejects the commit because another
\* transaction moved the offset since this one read it; the write is
\* discarded and the worker starts over from the committed offset.
\* @type: (Str) => Bool;
CommitRejected(w) ==
    /\ Transactional
    /\ ~wk[w].hung
    /\ wk[w].phase = "written"
    /\ Conflict(wk[w].src, wk[w].off)
    /\ wk' = [wk EXCEPT ![w] = Idle]
    /\ action' = Act("CommitRejected", w, "src" :> wk[w].src @@ "read" :> wk[w].off @@ "committed" :> committed[wk[w].src])
    /\ UNCHANGED <<targetVars, offsetVars, ownerVars, faultVars>>

\* Worker w crashes mid-iteration and restarts at once: its volatile state,
\* and with it any open transaction, is gone; durable state stays.
\* @type: (Str) => Bool;
Crash(w) ==
    /\ crashes < MaxCrashes
    /\ ~wk[w].hung
    /\ wk[w].phase # "idle"
    /\ crashes' = crashes + 1
    /\ wk' = [wk EXCEPT ![w] = Idle]
    /\ action' = Act("Crash", w, NoArgs)
    /\ UNCHANGED <<targetVars, offsetVars, ownerVars, hangVars>>

\* Worker w hangs mid-iteration (a GC pause, a stalled disk, a VM freeze).
\* @type: (Str) => Bool;
Hang(w) ==
    /\ hangs < MaxHangs
    /\ ~wk[w].hung
    /\ wk[w].phase # "idle"
    /\ hangs' = hangs + 1
    /\ wk' = [wk EXCEPT ![w].hung = TRUE]
    /\ action' = Act("Hang", w, NoArgs)
    /\ UNCHANGED <<targetVars, offsetVars, ownerVars, crashVars>>

\* The group's failure detector gives partition p of a hung worker to w.
\* @type: (Str, Int) => Bool;
TakeOver(w, p) ==
    /\ owner[p] # w
    /\ wk[owner[p]].hung
    /\ ~wk[w].hung
    /\ owner' = [owner EXCEPT ![p] = w]
    /\ action' = Act("TakeOver", w, "src" :> p)
    /\ UNCHANGED <<targetVars, offsetVars, workerVars, faultVars>>

\* A hung worker resumes where it stopped, unaware of what happened
\* meanwhile: a zombie until it next asks the group what it owns (Fetch).
\* @type: (Str) => Bool;
Resume(w) ==
    /\ wk[w].hung
    /\ wk' = [wk EXCEPT ![w].hung = FALSE]
    /\ action' = Act("Resume", w, NoArgs)
    /\ UNCHANGED <<targetVars, offsetVars, ownerVars, faultVars>>

\* Every message is moved and every worker is idle: nothing left to do.
\* An explicit terminal step, so that TLC's deadlock check stays meaningful.
Finished ==
    /\ \A p \in SrcParts : committed[p] = MsgsPerSrc
    /\ \A w \in Workers : wk[w] = Idle
    /\ UNCHANGED vars

Next ==
    \/ \E w \in Workers, p \in SrcParts : Fetch(w, p) \/ TakeOver(w, p)
    \/ \E w \in Workers :
        \/ Write(w)
        \/ CommitOffset(w)
        \/ CommitTxn(w)
        \/ CommitRejected(w)
        \/ Crash(w)
        \/ Hang(w)
        \/ Resume(w)
    \/ Finished

Spec == Init /\ [][Next]_vars

-----------------------------------------------------------------------------
(* Invariants *)

\* Every variable holds a value of the expected shape: one named part per variable.
TargetTypeOK == DOMAIN target = DstParts /\ \A d \in DstParts : \A i \in DOMAIN target[d] : target[d][i] \in Messages
CommittedTypeOK == committed \in [SrcParts -> 0..MsgsPerSrc]
OwnerTypeOK == owner \in [SrcParts -> Workers]
WkTypeOK ==
    /\ DOMAIN wk = Workers
    /\ \A w \in Workers :
        /\ wk[w].phase \in {"idle", "fetched", "written"}
        /\ wk[w].phase # "idle" => wk[w].src \in SrcParts /\ wk[w].off \in Offsets
CrashesTypeOK == crashes \in 0..MaxCrashes
HangsTypeOK == hangs \in 0..MaxHangs

TypeOK ==
    /\ TargetTypeOK
    /\ CommittedTypeOK
    /\ OwnerTypeOK
    /\ WkTypeOK
    /\ CrashesTypeOK
    /\ HangsTypeOK

\* How many copies of message (p, o) the target exposes.
\* @type: (Int, Int) => Int;
Copies(p, o) ==
    LET t == target[Dest(p, o)]
    IN Cardinality({i \in DOMAIN t : t[i] = Msg(p, o)})

\* No message is in the target twice.
NoDuplicates == \A p \in SrcParts, o \in Offsets : Copies(p, o) <= 1

\* Every message below the committed offset is in the target.
NoLoss == \A p \in SrcParts, o \in Offsets : o < committed[p] => Copies(p, o) >= 1

ExactlyOnce == NoDuplicates /\ NoLoss

\* In every target partition, messages of one source partition appear in
\* source order (a duplicate of the same message is ExactlyOnce's concern).
OrderPreserved ==
    \A d \in DstParts :
        \A i, j \in DOMAIN target[d] :
            (i < j /\ target[d][i].src = target[d][j].src) => target[d][i].off <= target[d][j].off

=============================================================================
