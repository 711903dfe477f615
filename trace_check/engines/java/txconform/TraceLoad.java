// txconform: the states a trace window starts from, read by TLC from a file instead of parsed by SANY.
//
// A window of a long trace starts from the states the window before ended in (trace_check/traces/
// handoff.py). Written into the generated module as a TLA+ literal, a start state costs SANY a syntax
// node per part of it, kept for the whole run: at 500,000 events of a faulty Kafka run (21.8 MB of
// TLA+) SANY ran out of a 2 GB heap after a minute. TraceLoad.tla declares TraceLoaded(path); this
// class overrides it (tlc2.overrides.TLAPlusOperator, registered by tlc2.overrides.TLCOverrides) and
// builds the value from the file directly, as TLC would evaluate the same literal: records, tuples,
// sets, functions (k :> v @@ ...), strings, integers, intervals, booleans and model values, the values
// TLC prints. A file is read once per run: TLC evaluates TraceLoaded(path) again wherever a definition
// that another replaces in the configuration (PlogBase <- TraceBase_plog) is read, at every step.
package txconform;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import tlc2.overrides.TLAPlusOperator;
import tlc2.util.FP64;
import tlc2.value.impl.BoolValue;
import tlc2.value.impl.EnumerableValue;
import tlc2.value.impl.FcnLambdaValue;
import tlc2.value.impl.FcnRcdValue;
import tlc2.value.impl.IntValue;
import tlc2.value.impl.IntervalValue;
import tlc2.value.impl.ModelValue;
import tlc2.value.impl.RecordValue;
import tlc2.value.impl.SetEnumValue;
import tlc2.value.impl.StringValue;
import tlc2.value.impl.TupleValue;
import tlc2.value.impl.Value;
import util.UniqueString;

public final class TraceLoad {

    private TraceLoad() {
    }

    /** Each file read, by its name, with its value (txconform writes a run's files before TLC starts). */
    private static final Map<String, Value> LOADED = new ConcurrentHashMap<>();

    @TLAPlusOperator(identifier = "TraceLoaded", module = "TraceLoad", minLevel = 0)
    public static Value load(final Value path) throws IOException {
        if (!(path instanceof StringValue)) {
            throw new IllegalArgumentException("TraceLoaded: the argument must be a file name, a string");
        }
        final String name = ((StringValue) path).val.toString();
        final Value known = LOADED.get(name);
        if (known != null) {
            return known;
        }
        final Value v = read(name);
        LOADED.put(name, v);
        return v;
    }

    // TraceConcat(s, t): s \o t, made once for each pair of sequences. A window of a long trace
    // starts from bases of its logs (trace_check/traces/handoff.py: Base) and the spec reads a log
    // as its base joined with the variable's entries (KafkaTxn: Joined); TLC evaluates that at
    // every read, and a join copies the base. The variable's value is the same object at every
    // read within a state, and in every successor that did not append to it: the last joins are
    // kept, by the identity of both sequences (values are never changed once made).
    private static final int KEPT = 64;
    private static final TupleValue[][] JOINS = new TupleValue[KEPT][];
    private static int next;

    @TLAPlusOperator(identifier = "TraceConcat", module = "TraceLoad", minLevel = 0)
    public static Value concat(final Value s, final Value t) {
        final Value s1 = s.toTuple();
        final Value t1 = t.toTuple();
        if (!(s1 instanceof TupleValue) || !(t1 instanceof TupleValue)) {
            throw new IllegalArgumentException("TraceConcat: both arguments must be sequences");
        }
        final TupleValue a = (TupleValue) s1;
        final TupleValue b = (TupleValue) t1;
        if (a.elems.length == 0) {
            return b;
        }
        if (b.elems.length == 0) {
            return a;
        }
        synchronized (JOINS) {
            for (final TupleValue[] j : JOINS) {
                if (j != null && j[0] == a && j[1] == b) {
                    return j[2];
                }
            }
            final Value[] both = new Value[a.elems.length + b.elems.length];
            System.arraycopy(a.elems, 0, both, 0, a.elems.length);
            System.arraycopy(b.elems, 0, both, a.elems.length, b.elems.length);
            final TupleValue joined = new TupleValue(both);
            JOINS[next] = new TupleValue[] { a, b, joined };
            next = (next + 1) % KEPT;
            return joined;
        }
    }

    // TraceSave(path, v): writes v to the file, as TLC prints it (ToString) and TraceLoaded reads it
    // back, and is TRUE. A window of a long trace computes the index of its bases' entries once, at
    // its start (trace_check/traces/validation.py: changed_definitions), from the index a window
    // before saved of the entries its own bases had, and saves its own for the windows after it:
    // from scratch, the index of a million-event run's logs took TLC 10 s at each window's start.
    // The file appears whole or not at all (written aside, then renamed); one that cannot be
    // written only costs the windows after it the index from scratch.
    @TLAPlusOperator(identifier = "TraceSave", module = "TraceLoad", minLevel = 0)
    public static Value save(final Value path, final Value v) {
        if (!(path instanceof StringValue)) {
            throw new IllegalArgumentException("TraceSave: the first argument must be a file name, a string");
        }
        final String name = ((StringValue) path).val.toString();
        final java.nio.file.Path target = Paths.get(name);
        final java.nio.file.Path part = Paths.get(name + ".part");
        try {
            Files.write(part, v.toString().getBytes(StandardCharsets.UTF_8));
            Files.move(part, target, java.nio.file.StandardCopyOption.ATOMIC_MOVE, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        } catch (final IOException e) {
            System.err.println("txconform: TraceSave: cannot write " + name + ": " + e.getMessage());
        }
        return BoolValue.ValTrue;
    }

    // TraceFP(v): a fingerprint of v for the VIEW of a trace window (trace_check/traces/
    // validation.py: module_text). TLC fingerprints every state it reaches, walking every part of it:
    // a window's logs grow with its events, so a window cost time in the square of its length, and
    // the rest of a Kafka state (clients, coordinator, network) is some 50 KB of values, of which a
    // step changes a few. A step makes new values only along what it changes, and shares every other
    // part, by reference, with the state before (EXCEPT, Append, SubSeq, set union and difference
    // all keep their parts' objects), and TLC never changes a value once made. So the fingerprint of
    // each function, record, sequence and set is kept by the value's identity and computed once: a
    // state costs what its step changed. The scheme is TLC's own 64-bit polynomial fingerprint
    // (FP64) of each part's kind, size, keys and the fingerprints of its parts; two different states
    // get the same one with the odds of TLC's own fingerprints. (Two equal values built differently,
    // a set as an interval and as an enumeration, may get different ones: TLC then explores the same
    // state twice, and the verdict is unchanged.) The result is a pair of 32-bit integers.
    private static final int PARTS_KEPT = 1 << 20;
    private static final ThreadLocal<IdentityHashMap<Value, Long>> PART_FPS = ThreadLocal.withInitial(IdentityHashMap::new);
    private static final byte FCN = 100;
    private static final byte SET = 101;

    @TLAPlusOperator(identifier = "TraceFP", module = "TraceLoad", minLevel = 0)
    public static Value fp(final Value v) {
        return pair(fingerprint(v));
    }

    private static long fingerprint(final Value v) {
        final IdentityHashMap<Value, Long> known = PART_FPS.get();
        if (known.size() > PARTS_KEPT) {
            known.clear();
        }
        return structural(v, known); // the argument itself is new at every state: not kept
    }

    private static Value pair(final long fp) {
        return new TupleValue(IntValue.gen((int) (fp >>> 32)), IntValue.gen((int) fp));
    }

    // TraceSame(a, b): a = b, looking no deeper where both share a part. After every event, a trace
    // check asks which variables the step changed (x' = x, trace_check/traces/validation.py:
    // changed_definitions). A step shares, by reference, every part of the state it does not change,
    // but TLC's equality walks both values whole: for a Kafka state, some 50 KB of clients,
    // coordinator and network at every step. Parts of the same kind and shape are compared part by
    // part; anything else, as TLC compares it.
    @TLAPlusOperator(identifier = "TraceSame", module = "TraceLoad", minLevel = 0)
    public static Value same(final Value a, final Value b) {
        return same0(a, b) ? BoolValue.ValTrue : BoolValue.ValFalse;
    }

    private static boolean same0(final Value a, final Value b) {
        if (a == b) {
            return true;
        }
        if (a instanceof TupleValue && b instanceof TupleValue) {
            return allSame(((TupleValue) a).elems, ((TupleValue) b).elems);
        }
        if (a instanceof RecordValue && b instanceof RecordValue) {
            final RecordValue x = (RecordValue) a;
            final RecordValue y = (RecordValue) b;
            x.normalize();
            y.normalize();
            return java.util.Arrays.equals(x.names, y.names) && allSame(x.values, y.values);
        }
        if (a instanceof FcnRcdValue && b instanceof FcnRcdValue) {
            final FcnRcdValue x = (FcnRcdValue) a;
            final FcnRcdValue y = (FcnRcdValue) b;
            x.normalize();
            y.normalize();
            final boolean keys = x.intv != null && y.intv != null ? x.intv.equals(y.intv)
                    : x.domain != null && y.domain != null && java.util.Arrays.equals(x.domain, y.domain);
            if (!keys || x.values.length != y.values.length) {
                return a.equals(b); // the same function written with an interval and with its keys listed
            }
            return allSame(x.values, y.values);
        }
        if (a instanceof SetEnumValue && b instanceof SetEnumValue) {
            final SetEnumValue x = (SetEnumValue) a;
            final SetEnumValue y = (SetEnumValue) b;
            x.normalize(); // in TLC's order, without repeats: equal sets, the same elements in turn
            y.normalize();
            if (x.elems.size() != y.elems.size()) {
                return false;
            }
            for (int i = 0; i < x.elems.size(); i++) {
                if (!same0(x.elems.elementAt(i), y.elems.elementAt(i))) {
                    return false;
                }
            }
            return true;
        }
        return a.equals(b);
    }

    private static boolean allSame(final Value[] x, final Value[] y) {
        if (x.length != y.length) {
            return false;
        }
        for (int i = 0; i < x.length; i++) {
            if (!same0(x[i], y[i])) {
                return false;
            }
        }
        return true;
    }

    // TraceKeep(v): a key for v, the pair TraceFP(v) gives, with v kept under it; TraceKept(key): the
    // value kept under the key. A trace check keeps an index of each log (trace_check/traces/
    // validation.py: changed_definitions) that grows with the trace: near the end of a million-event
    // run, every committed and aborted transaction and every producer epoch of each partition. TLC
    // normalizes every variable of every state it reaches, part by part (TLCStateMut.fingerPrint),
    // whether the step changed it or not: the index cost 13% of a late window's time that way. The
    // state holds the key instead, and the index is read through TraceKept. Kept are the last
    // VALUES_KEPT values (a window's states are expanded level by level; a state's key is read
    // when TLC checks it and when it expands it, not later). The key must be a function of the
    // value: a new number at each call (tried, to spare fingerprinting each new index) broke TLC's
    // counterexamples: TLC printed the behaviour up to the violating state, then stopped with
    // "Failed to recover the initial state from its fingerprint" (our reading, not checked in
    // TLC's source: it finds that state again among its predecessor's successors, and the one it
    // computes again holds a new key).
    private static final int VALUES_KEPT = 1 << 16;
    private static final Map<Long, Value> KEPT_VALUES = java.util.Collections.synchronizedMap(
            new java.util.LinkedHashMap<Long, Value>(1024, 0.75f, true) {
                private static final long serialVersionUID = 1L;

                @Override
                protected boolean removeEldestEntry(final Map.Entry<Long, Value> eldest) {
                    return size() > VALUES_KEPT;
                }
            });

    @TLAPlusOperator(identifier = "TraceKeep", module = "TraceLoad", minLevel = 0)
    public static Value keep(final Value v) {
        final long fp = fingerprint(v); // (normalizes each part it reads, as TLC would)
        KEPT_VALUES.put(fp, v);
        return pair(fp);
    }

    @TLAPlusOperator(identifier = "TraceKept", module = "TraceLoad", minLevel = 0)
    public static Value kept(final Value key) {
        final Value t = key.toTuple();
        if (!(t instanceof TupleValue) || ((TupleValue) t).elems.length != 2 || !(((TupleValue) t).elems[0] instanceof IntValue)
                || !(((TupleValue) t).elems[1] instanceof IntValue)) {
            throw new IllegalArgumentException("TraceKept: the key must be a pair of integers that TraceKeep gave");
        }
        final long fp = ((long) ((IntValue) ((TupleValue) t).elems[0]).val << 32)
                | (((IntValue) ((TupleValue) t).elems[1]).val & 0xffffffffL);
        final Value v = KEPT_VALUES.get(fp);
        if (v == null) {
            throw new IllegalStateException("TraceKept: no value is kept under " + key
                    + " (only the last " + VALUES_KEPT + " are); check the trace in smaller windows (--window)");
        }
        return v;
    }

    private static long part(final Value v, final IdentityHashMap<Value, Long> known) {
        if (!(v instanceof TupleValue || v instanceof FcnRcdValue || v instanceof RecordValue || v instanceof EnumerableValue
              || v instanceof FcnLambdaValue)) {
            return v.fingerPrint(FP64.New()); // a number, string, Boolean or model value
        }
        final Long seen = known.get(v);
        if (seen != null) {
            return seen.longValue();
        }
        final long fp = structural(v, known);
        known.put(v, fp);
        return fp;
    }

    /** A set or function as TLC enumerates it: an interval or a lazy function made explicit. */
    private static Value explicit(final Value v) {
        if (v instanceof EnumerableValue && !(v instanceof SetEnumValue)) {
            final Value s = v.toSetEnum();
            return s instanceof SetEnumValue ? s : v;
        }
        if (v instanceof FcnLambdaValue) {
            final Value f = v.toFcnRcd();
            return f instanceof FcnRcdValue ? f : v;
        }
        return v;
    }

    private static long intKey(final long fp, final int i) {
        return FP64.Extend(FP64.Extend(fp, (byte) 1), i); // as IntValue.fingerPrint
    }

    private static long structural(final Value value, final IdentityHashMap<Value, Long> known) {
        final Value v = explicit(value);
        if (v instanceof TupleValue) { // a function of 1..n
            final Value[] elems = ((TupleValue) v).elems;
            long fp = FP64.Extend(FP64.Extend(FP64.New(), FCN), elems.length);
            for (int i = 0; i < elems.length; i++) {
                fp = FP64.Extend(intKey(fp, i + 1), part(elems[i], known));
            }
            return fp;
        }
        if (v instanceof RecordValue) { // a function of its field names
            final RecordValue r = (RecordValue) v;
            r.normalize();
            long fp = FP64.Extend(FP64.Extend(FP64.New(), FCN), r.names.length);
            for (int i = 0; i < r.names.length; i++) {
                final String name = r.names[i].toString();
                fp = FP64.Extend(FP64.Extend(FP64.Extend(fp, (byte) 3), name.length()), name); // as StringValue.fingerPrint
                fp = FP64.Extend(fp, part(r.values[i], known));
            }
            return fp;
        }
        if (v instanceof FcnRcdValue) {
            final FcnRcdValue f = (FcnRcdValue) v;
            f.normalize(); // the domain in TLC's order
            long fp = FP64.Extend(FP64.Extend(FP64.New(), FCN), f.values.length);
            for (int i = 0; i < f.values.length; i++) {
                fp = f.intv != null ? intKey(fp, f.intv.low + i) : f.domain[i].fingerPrint(fp);
                fp = FP64.Extend(fp, part(f.values[i], known));
            }
            return fp;
        }
        if (v instanceof SetEnumValue) {
            final SetEnumValue s = (SetEnumValue) v;
            s.normalize(); // the elements in TLC's order, without repeats
            long fp = FP64.Extend(FP64.Extend(FP64.New(), SET), s.elems.size());
            for (int i = 0; i < s.elems.size(); i++) {
                fp = FP64.Extend(fp, part(s.elems.elementAt(i), known));
            }
            return fp;
        }
        return v.fingerPrint(FP64.New());
    }

    private static Value read(final String name) throws IOException {
        final String text = new String(Files.readAllBytes(Paths.get(name)), StandardCharsets.UTF_8);
        final Parser p = new Parser(text, name);
        final Value v = p.value();
        p.end();
        return v;
    }

    /** A record's field names in TLC's normal order (UniqueString.compareTo), and where each was written. */
    static final class Shape {
        final UniqueString[] names;
        final Integer[] order;

        Shape(final List<String> written) {
            final UniqueString[] us = new UniqueString[written.size()];
            for (int k = 0; k < us.length; k++) {
                us[k] = UniqueString.uniqueStringOf(written.get(k));
            }
            order = new Integer[us.length];
            for (int k = 0; k < order.length; k++) {
                order[k] = k;
            }
            java.util.Arrays.sort(order, (a, b) -> us[a].compareTo(us[b]));
            names = new UniqueString[us.length];
            for (int k = 0; k < names.length; k++) {
                names[k] = us[order[k]];
            }
        }
    }

    /** A recursive descent over the text; strings and records' field names are shared. */
    static final class Parser {
        private final String s;
        private final String name;
        private int i;
        private final Map<String, StringValue> strings = new HashMap<>();
        private final Map<String, Shape> shapes = new HashMap<>();

        Parser(final String s, final String name) {
            this.s = s;
            this.name = name;
        }

        private IllegalArgumentException fail(final String what) {
            return new IllegalArgumentException("TraceLoaded: " + name + ": offset " + i + ": " + what);
        }

        private void space() {
            while (i < s.length() && Character.isWhitespace(s.charAt(i))) {
                i++;
            }
        }

        private boolean take(final String tok) {
            space();
            if (s.startsWith(tok, i)) {
                i += tok.length();
                return true;
            }
            return false;
        }

        private void expect(final String tok) {
            if (!take(tok)) {
                throw fail("expected '" + tok + "'");
            }
        }

        void end() {
            space();
            if (i != s.length()) {
                throw fail("text after the value");
            }
        }

        Value value() {
            space();
            if (i >= s.length()) {
                throw fail("expected a value, found the end");
            }
            final char c = s.charAt(i);
            if (c == '"') {
                return string();
            }
            if (c == '-' || Character.isDigit(c)) {
                final int lo = integer();
                if (take("..")) {
                    return new IntervalValue(lo, integer());
                }
                return IntValue.gen(lo);
            }
            if (take("<<")) {
                return new TupleValue(items(">>"));
            }
            if (take("{")) {
                return new SetEnumValue(items("}"), false);
            }
            if (take("[")) {
                return record();
            }
            if (take("(")) {
                final Value first = value();
                if (take(")")) {
                    return first;
                }
                final List<Value> keys = new ArrayList<>();
                final List<Value> vals = new ArrayList<>();
                Value key = first;
                while (true) {
                    expect(":>");
                    keys.add(key);
                    vals.add(value());
                    if (!take("@@")) {
                        break;
                    }
                    key = value();
                }
                expect(")");
                return new FcnRcdValue(keys.toArray(new Value[0]), vals.toArray(new Value[0]), false);
            }
            final String word = word();
            if (word.equals("TRUE")) {
                return BoolValue.ValTrue;
            }
            if (word.equals("FALSE")) {
                return BoolValue.ValFalse;
            }
            return ModelValue.make(word);
        }

        /** Values separated by commas up to ``close``, after the opening bracket. */
        private Value[] items(final String close) {
            final List<Value> elems = new ArrayList<>();
            if (!take(close)) {
                do {
                    elems.add(value());
                } while (take(","));
                expect(close);
            }
            return elems.toArray(new Value[0]);
        }

        private Value record() {
            final List<String> names = new ArrayList<>();
            final List<Value> vals = new ArrayList<>();
            if (!take("]")) {
                do {
                    names.add(word());
                    expect("|->");
                    vals.add(value());
                } while (take(","));
                expect("]");
            }
            final String key = String.join(",", names);
            Shape shape = shapes.get(key);
            if (shape == null) {
                shape = new Shape(names);
                shapes.put(key, shape);
            }
            final Value[] sorted = new Value[shape.order.length];
            for (int k = 0; k < sorted.length; k++) {
                sorted[k] = vals.get(shape.order[k]);
            }
            // normalized: names in TLC's order, shared as TLC shares them (RecordValue.takeExcept)
            return new RecordValue(shape.names, sorted, true);
        }

        private String word() {
            space();
            final int start = i;
            while (i < s.length() && (Character.isLetterOrDigit(s.charAt(i)) || s.charAt(i) == '_')) {
                i++;
            }
            if (start == i) {
                throw fail("expected a value or a name");
            }
            return s.substring(start, i);
        }

        private int integer() {
            final int start = i;
            if (s.charAt(i) == '-') {
                i++;
            }
            while (i < s.length() && Character.isDigit(s.charAt(i))) {
                i++;
            }
            try {
                return Integer.parseInt(s.substring(start, i));
            } catch (NumberFormatException e) {
                i = start;
                throw fail("not an integer TLC can hold");
            }
        }

        private Value string() {
            final StringBuilder b = new StringBuilder();
            i++; // the opening quote
            while (true) {
                if (i >= s.length()) {
                    throw fail("a string that does not end");
                }
                final char c = s.charAt(i++);
                if (c == '"') {
                    break;
                }
                if (c != '\\') {
                    b.append(c);
                    continue;
                }
                if (i >= s.length()) {
                    throw fail("a string that does not end");
                }
                final char e = s.charAt(i++);
                switch (e) {
                    case 'n': b.append('\n'); break;
                    case 't': b.append('\t'); break;
                    case 'r': b.append('\r'); break;
                    case 'f': b.append('\f'); break;
                    case '"': b.append('"'); break;
                    case '\\': b.append('\\'); break;
                    default: throw fail("unknown escape \\" + e);
                }
            }
            final String text = b.toString();
            return strings.computeIfAbsent(text, StringValue::new);
        }
    }
}
