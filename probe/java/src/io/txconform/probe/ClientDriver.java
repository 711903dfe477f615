package io.txconform.probe;

import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.errors.RetriableException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.errors.TransactionAbortableException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * One transactional KafkaProducer, and optionally one KafkaConsumer in a group (consume-transform-
 * produce, KIP-447), driven line by line by txconform's probe (probe/java_client.py).
 *
 * <p>stdin: one JSON object per line, its field {@code op} naming the command (producer, init,
 * begin, send, flush, commit, abort, offsets, close, version; the consumer's: consumer, poll,
 * assignment, positions, ctp_offsets, seek_committed, consumer_close). stdout: exactly one JSON answer line
 * per command, flushed; a {@code seq} field of the command is echoed in its answer. Errors are
 * {@code {"ok":false,"error":"Class: message","fenced":..,"abortable":..,"fatal":..}}. Delivery
 * reports are kept by the callbacks and answered by {@code flush}, in the order of the sends. The
 * client's log goes through SLF4J to the log4j2 file the driver is started with; anything else that
 * writes to System.out is sent to stderr, so stdout carries the answers only. EOF on stdin (or
 * close) closes the producer and the consumer and exits.
 *
 * <p>The consumer: {@code consumer} creates it (group.id, read_committed, no auto commit, earliest,
 * the classic group protocol, bounded timeouts; {@code config} overrides) and subscribes to
 * {@code topics}; {@code poll} answers {@code "records":[[topic,partition,offset,key,value],..]};
 * {@code assignment} {@code [[topic,partition],..]}; {@code positions} {@code [[topic,partition,
 * offset],..]} of the assignment; {@code ctp_offsets} sends those positions to the producer's
 * transaction with the consumer's own group metadata (generation and member id: KIP-447's
 * fencing) and answers them as {@code "offsets"}; {@code seek_committed} seeks every assigned
 * partition to its committed offset, or its beginning without one (after an abort).
 */
public final class ClientDriver {
    private static final int CLOSE_SECONDS = 5;
    private static final int CONSUMER_CALL_MS = 10000; // position, committed: bounded like the producer's calls
    private static final long MAX_POLL_MS = 30000;
    private static final int MAX_LINE = 1 << 20;

    private final PrintStream out;
    private KafkaProducer<String, String> producer;
    private KafkaConsumer<String, String> consumer;
    private final List<Long> pending = new ArrayList<>(); // send ids since the last flush, in order
    private final Map<Long, String> reports = new ConcurrentHashMap<>(); // id -> its report (JSON), from the callbacks

    private ClientDriver(PrintStream out) {
        this.out = out;
    }

    public static void main(String[] args) throws Exception {
        PrintStream answers = new PrintStream(new FileOutputStream(FileDescriptor.out), false, StandardCharsets.UTF_8);
        System.setOut(System.err); // a library that prints must not break the protocol
        ClientDriver driver = new ClientDriver(answers);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        int code = 0;
        try {
            String line;
            while ((line = in.readLine()) != null) {
                if (line.isBlank()) {
                    continue;
                }
                if (driver.handle(line)) {
                    break;
                }
            }
        } catch (Throwable t) {
            code = 1;
            t.printStackTrace();
        } finally {
            driver.closeProducer();
            driver.closeConsumer();
        }
        answers.flush();
        System.exit(code);
    }

    /** Runs one command line and prints its answer; true when the driver should exit. */
    private boolean handle(String line) {
        Object seq = null;
        StringBuilder a = new StringBuilder();
        boolean exit = false;
        try {
            if (line.length() > MAX_LINE) {
                throw new BadCommand("command longer than " + MAX_LINE + " characters");
            }
            Object parsed = new Parser(line).parse();
            if (!(parsed instanceof Map)) {
                throw new BadCommand("a command is a JSON object");
            }
            @SuppressWarnings("unchecked")
            Map<String, Object> cmd = (Map<String, Object>) parsed;
            seq = cmd.get("seq");
            Object op = cmd.get("op");
            if (!(op instanceof String)) {
                throw new BadCommand("a command needs \"op\" (a string)");
            }
            exit = run((String) op, cmd, a);
        } catch (BadCommand e) {
            a.setLength(0);
            a.append("\"ok\":false,\"error\":").append(quote("bad command: " + e.getMessage()));
        } catch (Throwable e) {
            a.setLength(0);
            a.append("\"ok\":false,");
            error(e, a);
        }
        StringBuilder answer = new StringBuilder("{");
        if (seq instanceof Long || seq instanceof String) {
            answer.append("\"seq\":").append(seq instanceof Long ? seq.toString() : quote((String) seq)).append(',');
        }
        answer.append(a).append('}');
        out.println(answer);
        out.flush();
        return exit;
    }

    private static final class BadCommand extends RuntimeException {
        BadCommand(String message) {
            super(message);
        }
    }

    private boolean run(String op, Map<String, Object> cmd, StringBuilder a) {
        switch (op) {
            case "version":
                a.append("\"ok\":true,\"kafka_clients\":").append(quote(clientVersion()));
                return false;
            case "producer":
                create(cmd);
                break;
            case "init":
                need().initTransactions();
                break;
            case "begin":
                need().beginTransaction();
                break;
            case "commit":
                need().commitTransaction();
                break;
            case "abort":
                need().abortTransaction();
                break;
            case "send":
                send(cmd, a);
                return false;
            case "flush":
                flush(a);
                return false;
            case "offsets":
                offsets(cmd);
                break;
            case "consumer":
                createConsumer(cmd);
                break;
            case "poll":
                poll(cmd, a);
                return false;
            case "assignment":
                a.append("\"ok\":true,\"assignment\":").append(partitions(needConsumer().assignment()));
                return false;
            case "positions":
                a.append("\"ok\":true,\"positions\":").append(offsetsJson(positions()));
                return false;
            case "ctp_offsets":
                ctpOffsets(a);
                return false;
            case "seek_committed":
                seekCommitted(a);
                return false;
            case "consumer_close":
                closeConsumer();
                break;
            case "close":
                closeProducer();
                closeConsumer();
                a.append("\"ok\":true");
                return true;
            default:
                throw new BadCommand("unknown op " + quote(op) + ": the ops are producer, init, begin, send, flush, commit, abort, offsets, "
                    + "consumer, poll, assignment, positions, ctp_offsets, seek_committed, consumer_close, close, version");
        }
        a.append("\"ok\":true");
        return false;
    }

    private KafkaProducer<String, String> need() {
        if (producer == null) {
            throw new BadCommand("no producer: send {\"op\":\"producer\",...} first");
        }
        return producer;
    }

    private void create(Map<String, Object> cmd) {
        if (producer != null) {
            throw new BadCommand("a producer exists already: one per driver");
        }
        Properties p = new Properties();
        p.put("bootstrap.servers", str(cmd, "bootstrap", true));
        p.put("transactional.id", str(cmd, "txid", true));
        p.put("enable.idempotence", "true");
        p.put("transaction.timeout.ms", "60000");
        p.put("delivery.timeout.ms", "15000");
        p.put("request.timeout.ms", "10000");
        p.put("max.block.ms", "10000");
        p.put("linger.ms", "2");
        p.put("key.serializer", StringSerializer.class.getName());
        p.put("value.serializer", StringSerializer.class.getName());
        Object extra = cmd.get("config");
        if (extra instanceof Map) {
            for (Map.Entry<?, ?> e : ((Map<?, ?>) extra).entrySet()) {
                if (e.getValue() != null) {
                    p.put(String.valueOf(e.getKey()), String.valueOf(e.getValue()));
                }
            }
        } else if (extra != null) {
            throw new BadCommand("\"config\" is an object of producer properties");
        }
        producer = new KafkaProducer<>(p);
    }

    private void send(Map<String, Object> cmd, StringBuilder a) {
        KafkaProducer<String, String> prod = need();
        String topic = str(cmd, "topic", true);
        Object part = cmd.get("partition");
        Integer partition = part == null ? null : (int) num(cmd, "partition");
        long id = num(cmd, "id");
        ProducerRecord<String, String> record = new ProducerRecord<>(topic, partition, str(cmd, "key", false), str(cmd, "value", false));
        pending.add(id);
        try {
            prod.send(record, (metadata, e) -> {
                String offset = e == null && metadata != null && metadata.hasOffset() ? Long.toString(metadata.offset()) : "null";
                String err = e == null ? "null" : quote(describe(e));
                reports.put(id, "{\"id\":" + id + ",\"offset\":" + offset + ",\"error\":" + err + "}");
            });
        } catch (Throwable t) {
            pending.remove(pending.size() - 1);
            reports.remove(id);
            throw t;
        }
        a.append("\"ok\":true");
    }

    private void flush(StringBuilder a) {
        String failed = null;
        if (producer != null) {
            try {
                producer.flush();
            } catch (Throwable t) {
                StringBuilder e = new StringBuilder();
                error(t, e);
                failed = e.toString();
            }
        }
        StringBuilder r = new StringBuilder("[");
        Set<Long> asked = new HashSet<>(pending);
        for (int k = 0; k < pending.size(); k++) {
            long id = pending.get(k);
            String report = reports.remove(id);
            r.append(k == 0 ? "" : ",").append(report != null ? report : "{\"id\":" + id + ",\"offset\":null,\"error\":\"no answer\"}");
        }
        reports.keySet().removeIf(id -> !asked.contains(id)); // late reports of sends already answered "no answer"
        pending.clear();
        r.append(']');
        a.append(failed == null ? "\"ok\":true" : "\"ok\":false," + failed).append(",\"reports\":").append(r);
    }

    @SuppressWarnings("removal") // ConsumerGroupMetadata(String): a group's id only (KIP-447's fencing by generation needs the consumer's own)
    private void offsets(Map<String, Object> cmd) {
        KafkaProducer<String, String> prod = need();
        String group = str(cmd, "group", true);
        Object list = cmd.get("offsets");
        if (!(list instanceof List)) {
            throw new BadCommand("\"offsets\" is a list of [topic, partition, offset]");
        }
        Map<TopicPartition, OffsetAndMetadata> offsets = new LinkedHashMap<>();
        for (Object o : (List<?>) list) {
            if (!(o instanceof List) || ((List<?>) o).size() != 3) {
                throw new BadCommand("\"offsets\" is a list of [topic, partition, offset]");
            }
            List<?> t = (List<?>) o;
            if (!(t.get(0) instanceof String) || !(t.get(1) instanceof Long) || !(t.get(2) instanceof Long)) {
                throw new BadCommand("\"offsets\" is a list of [topic, partition, offset]");
            }
            offsets.put(new TopicPartition((String) t.get(0), ((Long) t.get(1)).intValue()), new OffsetAndMetadata((Long) t.get(2)));
        }
        prod.sendOffsetsToTransaction(offsets, new ConsumerGroupMetadata(group));
    }

    private void closeProducer() {
        if (producer != null) {
            KafkaProducer<String, String> p = producer;
            producer = null;
            try {
                p.close(Duration.ofSeconds(CLOSE_SECONDS));
            } catch (Throwable t) {
                t.printStackTrace();
            }
        }
    }

    // --- the consumer (consume-transform-produce) ------------------------------------------------

    private KafkaConsumer<String, String> needConsumer() {
        if (consumer == null) {
            throw new BadCommand("no consumer: send {\"op\":\"consumer\",...} first");
        }
        return consumer;
    }

    private void createConsumer(Map<String, Object> cmd) {
        if (consumer != null) {
            throw new BadCommand("a consumer exists already: one per driver");
        }
        String bootstrap = str(cmd, "bootstrap", true);
        String group = str(cmd, "group", true);
        Object list = cmd.get("topics");
        List<String> topics = new ArrayList<>();
        if (list instanceof List) {
            for (Object t : (List<?>) list) {
                if (!(t instanceof String)) {
                    throw new BadCommand("\"topics\" is a list of topic names");
                }
                topics.add((String) t);
            }
        }
        if (topics.isEmpty()) {
            throw new BadCommand("\"topics\" is a non-empty list of topic names");
        }
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("group.id", group);
        p.put("group.protocol", "classic");
        p.put("isolation.level", "read_committed");
        p.put("enable.auto.commit", "false");
        p.put("auto.offset.reset", "earliest");
        p.put("allow.auto.create.topics", "false");
        p.put("session.timeout.ms", "30000");
        p.put("heartbeat.interval.ms", "1000");
        p.put("max.poll.interval.ms", "60000");
        p.put("request.timeout.ms", "10000");
        p.put("default.api.timeout.ms", String.valueOf(CONSUMER_CALL_MS));
        p.put("key.deserializer", StringDeserializer.class.getName());
        p.put("value.deserializer", StringDeserializer.class.getName());
        Object extra = cmd.get("config");
        if (extra instanceof Map) {
            for (Map.Entry<?, ?> e : ((Map<?, ?>) extra).entrySet()) {
                if (e.getValue() != null) {
                    p.put(String.valueOf(e.getKey()), String.valueOf(e.getValue()));
                }
            }
        } else if (extra != null) {
            throw new BadCommand("\"config\" is an object of consumer properties");
        }
        KafkaConsumer<String, String> c = new KafkaConsumer<>(p);
        try {
            c.subscribe(topics);
        } catch (Throwable t) {
            c.close(Duration.ofSeconds(CLOSE_SECONDS));
            throw t;
        }
        consumer = c;
    }

    private void poll(Map<String, Object> cmd, StringBuilder a) {
        KafkaConsumer<String, String> c = needConsumer();
        long ms = num(cmd, "ms");
        if (ms < 0 || ms > MAX_POLL_MS) {
            throw new BadCommand("\"ms\" is between 0 and " + MAX_POLL_MS);
        }
        StringBuilder r = new StringBuilder("[");
        boolean first = true;
        for (ConsumerRecord<String, String> rec : c.poll(Duration.ofMillis(ms))) {
            r.append(first ? "" : ",").append('[').append(quote(rec.topic())).append(',').append(rec.partition())
                .append(',').append(rec.offset()).append(',').append(quote(rec.key())).append(',').append(quote(rec.value())).append(']');
            first = false;
        }
        a.append("\"ok\":true,\"records\":").append(r.append(']'));
    }

    /** The consumer's position on each assigned partition, in the order of topic and partition;
     *  all of them within CONSUMER_CALL_MS (a position unknown until then: TimeoutException). */
    private Map<TopicPartition, OffsetAndMetadata> positions() {
        KafkaConsumer<String, String> c = needConsumer();
        Map<TopicPartition, OffsetAndMetadata> offsets = new LinkedHashMap<>();
        long deadline = System.nanoTime() + CONSUMER_CALL_MS * 1_000_000L;
        for (TopicPartition tp : sorted(c.assignment())) {
            long left = Math.max(1L, (deadline - System.nanoTime()) / 1_000_000L);
            offsets.put(tp, new OffsetAndMetadata(c.position(tp, Duration.ofMillis(left))));
        }
        return offsets;
    }

    /** sendOffsetsToTransaction(the positions, consumer.groupMetadata()): KIP-447's path. */
    private void ctpOffsets(StringBuilder a) {
        KafkaProducer<String, String> prod = need();
        KafkaConsumer<String, String> c = needConsumer();
        Map<TopicPartition, OffsetAndMetadata> offsets = positions();
        ConsumerGroupMetadata meta = c.groupMetadata();
        prod.sendOffsetsToTransaction(offsets, meta);
        a.append("\"ok\":true,\"offsets\":").append(offsetsJson(offsets))
            .append(",\"generation\":").append(meta.generationId())
            .append(",\"member\":").append(quote(meta.memberId()));
    }

    /** After an abort: every assigned partition back to its committed offset (its beginning without one). */
    private void seekCommitted(StringBuilder a) {
        KafkaConsumer<String, String> c = needConsumer();
        Set<TopicPartition> assigned = c.assignment();
        Map<TopicPartition, OffsetAndMetadata> committed = c.committed(assigned, Duration.ofMillis(CONSUMER_CALL_MS));
        List<TopicPartition> none = new ArrayList<>();
        StringBuilder r = new StringBuilder("[");
        boolean first = true;
        for (TopicPartition tp : sorted(assigned)) {
            OffsetAndMetadata o = committed.get(tp);
            if (o == null) {
                none.add(tp);
            } else {
                c.seek(tp, o);
            }
            r.append(first ? "" : ",").append('[').append(quote(tp.topic())).append(',').append(tp.partition()).append(',')
                .append(o == null ? "null" : Long.toString(o.offset())).append(']');
            first = false;
        }
        if (!none.isEmpty()) {
            c.seekToBeginning(none);
        }
        a.append("\"ok\":true,\"committed\":").append(r.append(']'));
    }

    private void closeConsumer() {
        if (consumer != null) {
            KafkaConsumer<String, String> c = consumer;
            consumer = null;
            try {
                c.close(Duration.ofSeconds(CLOSE_SECONDS));
            } catch (Throwable t) {
                t.printStackTrace();
            }
        }
    }

    static List<TopicPartition> sorted(Collection<TopicPartition> parts) {
        List<TopicPartition> l = new ArrayList<>(parts);
        l.sort((x, y) -> x.topic().equals(y.topic()) ? Integer.compare(x.partition(), y.partition()) : x.topic().compareTo(y.topic()));
        return l;
    }

    static String partitions(Collection<TopicPartition> parts) {
        StringBuilder r = new StringBuilder("[");
        boolean first = true;
        for (TopicPartition tp : sorted(parts)) {
            r.append(first ? "" : ",").append('[').append(quote(tp.topic())).append(',').append(tp.partition()).append(']');
            first = false;
        }
        return r.append(']').toString();
    }

    static String offsetsJson(Map<TopicPartition, OffsetAndMetadata> offsets) {
        StringBuilder r = new StringBuilder("[");
        boolean first = true;
        for (Map.Entry<TopicPartition, OffsetAndMetadata> e : offsets.entrySet()) {
            r.append(first ? "" : ",").append('[').append(quote(e.getKey().topic())).append(',').append(e.getKey().partition())
                .append(',').append(e.getValue().offset()).append(']');
            first = false;
        }
        return r.append(']').toString();
    }

    /** AppInfoParser.getVersion(): in org.apache.kafka.common.utils up to 4.3, in its internals package from 4.4. */
    static String clientVersion() {
        for (String name : new String[] {"org.apache.kafka.common.utils.internals.AppInfoParser", "org.apache.kafka.common.utils.AppInfoParser"}) {
            try {
                return String.valueOf(Class.forName(name).getMethod("getVersion").invoke(null));
            } catch (ReflectiveOperationException | LinkageError e) {
                // the other package
            }
        }
        return "unknown";
    }

    // --- errors -------------------------------------------------------------------------------

    /** The message of the KafkaException a transactional method throws, without trying, once the
     *  producer is in an error state (TransactionManager.maybeFailWithError); its cause is the error. */
    static final String ERROR_STATE = "Cannot execute transactional method because we are in an error state";

    /**
     * {@code "error":..,"fenced":..,"abortable":..,"fatal":..} for {@code e}. Fenced: a
     * ProducerFencedException or InvalidProducerEpochException, itself or as a cause. Neither
     * abortable nor fatal: a TimeoutException (the call's outcome is unknown; the client allows a
     * retry). Abortable: a TransactionAbortableException or another RetriableException in the
     * chain, or the refusal of a method because of an earlier error (ERROR_STATE: the method never
     * reached the broker; an abort says whether that error was abortable). Fatal: the rest.
     */
    static void error(Throwable e, StringBuilder a) {
        boolean fenced = false;
        boolean abortable = false;
        boolean timeout = false;
        Throwable c = e;
        for (int depth = 0; c != null && depth < 32; depth++, c = c.getCause() == c ? null : c.getCause()) {
            fenced |= c instanceof ProducerFencedException || c instanceof InvalidProducerEpochException;
            abortable |= c instanceof TransactionAbortableException || c instanceof RetriableException && !(c instanceof TimeoutException);
            timeout |= c instanceof TimeoutException;
        }
        boolean refused = e.getClass() == KafkaException.class && ERROR_STATE.equals(e.getMessage());
        if (fenced) {
            abortable = false;
            timeout = false;
        } else if (refused) {
            abortable = true;
            timeout = false;
        } else if (timeout) {
            abortable = false;
        }
        boolean fatal = !fenced && !abortable && !timeout;
        a.append("\"error\":").append(quote(describe(e)))
            .append(",\"fenced\":").append(fenced)
            .append(",\"abortable\":").append(abortable)
            .append(",\"fatal\":").append(fatal);
    }

    /** The exception's class and message, and its root cause's if it has one. */
    static String describe(Throwable e) {
        Throwable root = e;
        for (int depth = 0; root.getCause() != null && root.getCause() != root && depth < 32; depth++) {
            root = root.getCause();
        }
        String s = e.getClass().getName() + ": " + e.getMessage();
        if (root != e) {
            s += " (root cause " + root.getClass().getName() + ": " + root.getMessage() + ")";
        }
        return s.replace('\n', ' ');
    }

    // --- JSON ---------------------------------------------------------------------------------

    static String str(Map<String, Object> cmd, String key, boolean required) {
        Object v = cmd.get(key);
        if (v == null && !required) {
            return null;
        }
        if (!(v instanceof String)) {
            throw new BadCommand("\"" + key + "\" must be a string");
        }
        return (String) v;
    }

    static long num(Map<String, Object> cmd, String key) {
        Object v = cmd.get(key);
        if (!(v instanceof Long)) {
            throw new BadCommand("\"" + key + "\" must be an integer");
        }
        return (Long) v;
    }

    static String quote(String s) {
        if (s == null) {
            return "null";
        }
        StringBuilder b = new StringBuilder(s.length() + 2).append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"': b.append("\\\""); break;
                case '\\': b.append("\\\\"); break;
                case '\n': b.append("\\n"); break;
                case '\r': b.append("\\r"); break;
                case '\t': b.append("\\t"); break;
                default:
                    if (c < 0x20) {
                        b.append(String.format("\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
            }
        }
        return b.append('"').toString();
    }

    /** A JSON parser for the commands: objects (LinkedHashMap), arrays (ArrayList), strings,
     *  integers (Long), other numbers (Double), true, false, null. Depth and length are bounded. */
    static final class Parser {
        private final String s;
        private int i;
        private int depth;

        Parser(String s) {
            this.s = s;
        }

        Object parse() {
            Object v = value();
            ws();
            if (i != s.length()) {
                throw fail("text after the JSON value");
            }
            return v;
        }

        private BadCommand fail(String why) {
            return new BadCommand("malformed JSON at character " + i + ": " + why);
        }

        private void ws() {
            while (i < s.length() && (s.charAt(i) == ' ' || s.charAt(i) == '\t' || s.charAt(i) == '\r' || s.charAt(i) == '\n')) {
                i++;
            }
        }

        private Object value() {
            ws();
            if (i >= s.length()) {
                throw fail("a value was expected");
            }
            char c = s.charAt(i);
            if (c == '{' || c == '[') {
                if (++depth > 16) {
                    throw fail("nested too deep");
                }
                Object v = c == '{' ? object() : array();
                depth--;
                return v;
            }
            if (c == '"') {
                return string();
            }
            if (s.startsWith("true", i)) {
                i += 4;
                return Boolean.TRUE;
            }
            if (s.startsWith("false", i)) {
                i += 5;
                return Boolean.FALSE;
            }
            if (s.startsWith("null", i)) {
                i += 4;
                return null;
            }
            if (c == '-' || (c >= '0' && c <= '9')) {
                return number();
            }
            throw fail("unexpected " + quote(String.valueOf(c)));
        }

        private Map<String, Object> object() {
            Map<String, Object> m = new LinkedHashMap<>();
            i++;
            ws();
            if (i < s.length() && s.charAt(i) == '}') {
                i++;
                return m;
            }
            while (true) {
                ws();
                if (i >= s.length() || s.charAt(i) != '"') {
                    throw fail("a key (a string) was expected");
                }
                String key = string();
                ws();
                if (i >= s.length() || s.charAt(i) != ':') {
                    throw fail("':' was expected");
                }
                i++;
                m.put(key, value());
                ws();
                if (i < s.length() && s.charAt(i) == ',') {
                    i++;
                } else if (i < s.length() && s.charAt(i) == '}') {
                    i++;
                    return m;
                } else {
                    throw fail("',' or '}' was expected");
                }
            }
        }

        private List<Object> array() {
            List<Object> l = new ArrayList<>();
            i++;
            ws();
            if (i < s.length() && s.charAt(i) == ']') {
                i++;
                return l;
            }
            while (true) {
                l.add(value());
                ws();
                if (i < s.length() && s.charAt(i) == ',') {
                    i++;
                } else if (i < s.length() && s.charAt(i) == ']') {
                    i++;
                    return l;
                } else {
                    throw fail("',' or ']' was expected");
                }
            }
        }

        private String string() {
            StringBuilder b = new StringBuilder();
            i++;
            while (i < s.length()) {
                char c = s.charAt(i++);
                if (c == '"') {
                    return b.toString();
                }
                if (c != '\\') {
                    b.append(c);
                    continue;
                }
                if (i >= s.length()) {
                    break;
                }
                char e = s.charAt(i++);
                switch (e) {
                    case '"': b.append('"'); break;
                    case '\\': b.append('\\'); break;
                    case '/': b.append('/'); break;
                    case 'b': b.append('\b'); break;
                    case 'f': b.append('\f'); break;
                    case 'n': b.append('\n'); break;
                    case 'r': b.append('\r'); break;
                    case 't': b.append('\t'); break;
                    case 'u':
                        if (i + 4 > s.length()) {
                            throw fail("a \\u escape needs 4 hex digits");
                        }
                        try {
                            b.append((char) Integer.parseInt(s.substring(i, i + 4), 16));
                        } catch (NumberFormatException x) {
                            throw fail("a \\u escape needs 4 hex digits");
                        }
                        i += 4;
                        break;
                    default:
                        throw fail("unknown escape \\" + e);
                }
            }
            throw fail("unterminated string");
        }

        private Object number() {
            int start = i;
            if (s.charAt(i) == '-') {
                i++;
            }
            boolean integer = true;
            while (i < s.length()) {
                char c = s.charAt(i);
                if (c >= '0' && c <= '9') {
                    i++;
                } else if (c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-') {
                    integer = false;
                    i++;
                } else {
                    break;
                }
            }
            String t = s.substring(start, i);
            try {
                return integer ? (Object) Long.parseLong(t) : (Object) Double.parseDouble(t);
            } catch (NumberFormatException x) {
                throw fail("bad number " + quote(t));
            }
        }
    }
}
