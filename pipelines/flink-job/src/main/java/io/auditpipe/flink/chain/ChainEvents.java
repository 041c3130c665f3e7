package io.auditpipe.flink.chain;

import io.auditpipe.flink.document.EventDocument;
import io.auditpipe.flink.records.DeadLetter;
import io.auditpipe.flink.records.IngestedEvent;
import io.auditpipe.flink.sink.StoreDocuments;

import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.metrics.Counter;
import org.apache.flink.streaming.api.TimeDomain;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Iterator;
import java.util.Map;

/**
 * Keyed by server: passes the first copy of each event, and links it into the server's chain
 * ({@link EventChain}) before anything stores or archives it.
 *
 * <p><b>First copies.</b> Collectors and brokers re-send lines (a collector restart re-reads lines
 * since its last saved position; a broker failover can make an idempotent producer re-send a
 * batch). A copy is dropped here, so that the stats count each event id once and the chain links
 * it once. A copy whose line differs from the first one's ({@code line_sha256}) is no copy: it is
 * an id collision (two sources under one server name, a server reusing record ids), sent to
 * {@link #COLLISIONS} as a dead letter; the store keeps the first record. An id is remembered
 * until the watermark passes the end of its minute plus the stats' allowed lateness (then the
 * window would not count a copy anyway): state holds the ids of the minutes still open, 32 bytes
 * each ({@link FirstCopies}: an id is known by a 128-bit hash, its first line by a 64-bit
 * fingerprint of its digest).
 *
 * <p><b>Why keyed by server, and why that is deterministic.</b> A server's lines arrive on one
 * Kafka partition (the key is the source, and configuration allows one source per server), read
 * by one source subtask and sent here over one channel, so the order of a server's records here
 * is the partition's order, on every replay. Restored from a checkpoint, the chain continues
 * from the checkpointed link over the same records in the same order, and so gives every event
 * the link it had before: a document stored before a crash and replayed after it is the same
 * document (its insert is a duplicate key, ignored).
 *
 * <p><b>Heads.</b> At most once per head interval (processing time), a server whose chain grew
 * gets a {@link ChainHead} on {@link #HEADS}: the anchors that {@code auditpipe verify} checks
 * recomputed digests against.
 *
 * <p><b>Imported history.</b> Given a chain name ({@code auditpipe import}'s run), every event is
 * linked in that chain instead (its {@code chain} field, covered by the digest, and its heads name
 * it): a server's imported past is a chain of its own beside the live one, from link 1, so
 * importing never changes a link the live chain made (docs/archive.md "Imported history"). Its
 * input ends, so the last head is written when the watermark reaches the end of time, whatever the
 * head interval.
 *
 * <p>Known limit: a copy re-sent after its id was forgotten (later than the stats' lateness) is
 * linked a second time; its insert into the store is a duplicate (ignored), so that link has no
 * document there; verify finds the copy in the archive at that link and says so (docs/archive.md).
 */
public class ChainEvents extends KeyedProcessFunction<String, IngestedEvent, IngestedEvent> {
    private static final long serialVersionUID = 1L;

    /** Records whose id belongs to a different, earlier line: dead letters of stage "store". */
    public static final OutputTag<DeadLetter> COLLISIONS = new OutputTag<>("id-collisions") {};
    /** Where each server's chain stood, at most once per head interval. */
    public static final OutputTag<ChainHead> HEADS = new OutputTag<>("chain-heads") {};

    /** The watermark at the end of a bounded input: an imported chain's last head is written then. */
    static final long END_OF_INPUT = Long.MAX_VALUE;

    private final long windowMillis;
    private final long allowedLatenessMillis;
    private final long headIntervalMillis;
    /** The imported chain every event is linked in, null for the live chain. */
    private final String chain;
    /** The key file that signs the heads ({@link HeadSigner}); null: heads unsigned. Read where the operator runs. */
    private final String signingKeyFile;

    /** The ids this server's chain still remembers ({@link FirstCopies}). */
    private transient ValueState<FirstCopies> firstCopies;
    /** What held them before {@link FirstCopies} (event id -> (when to forget it, the first line's digest)):
     *  read once per server after a restore from such a checkpoint, moved over and cleared. */
    private transient MapState<String, Tuple2<Long, String>> firstCopiesBefore;
    private transient FirstCopies.IdHasher ids;
    private transient EventChain.Linker linker;
    private transient ValueState<Long> lastSeq;
    private transient ValueState<String> lastDigest;
    private transient ValueState<String> lastEventId;
    private transient ValueState<Long> lastEventTime;
    private transient ValueState<Long> headDueAt;
    private transient ValueState<Long> lastHeadSeq;
    private transient Counter repeats;
    private transient Counter collisions;
    private transient Counter links;
    private transient HeadSigner signer;

    public ChainEvents(Duration window, Duration allowedLateness, Duration headInterval) {
        this(window, allowedLateness, headInterval, null, null);
    }

    /** {@code chain}: the imported chain to link every event in (null: the server's live chain);
     *  {@code signingKeyFile}: the key that signs the heads (null: unsigned). */
    public ChainEvents(Duration window, Duration allowedLateness, Duration headInterval, String chain,
                       String signingKeyFile) {
        this.windowMillis = window.toMillis();
        this.allowedLatenessMillis = allowedLateness.toMillis();
        this.headIntervalMillis = headInterval.toMillis();
        this.chain = chain;
        this.signingKeyFile = signingKeyFile;
    }

    @Override
    public void open(OpenContext openContext) {
        firstCopies = getRuntimeContext().getState(new ValueStateDescriptor<>("first-copies-hashed",
                FirstCopies.Serializer.INSTANCE));
        firstCopiesBefore = getRuntimeContext().getMapState(new MapStateDescriptor<>("first-copies", Types.STRING,
                Types.TUPLE(Types.LONG, Types.STRING)));
        ids = new FirstCopies.IdHasher();
        linker = new EventChain.Linker();
        lastSeq = getRuntimeContext().getState(new ValueStateDescriptor<>("chain-seq", Types.LONG));
        lastDigest = getRuntimeContext().getState(new ValueStateDescriptor<>("chain-digest", Types.STRING));
        lastEventId = getRuntimeContext().getState(new ValueStateDescriptor<>("chain-last-event-id", Types.STRING));
        lastEventTime = getRuntimeContext().getState(new ValueStateDescriptor<>("chain-last-event-time", Types.LONG));
        headDueAt = getRuntimeContext().getState(new ValueStateDescriptor<>("chain-head-due-at", Types.LONG));
        lastHeadSeq = getRuntimeContext().getState(new ValueStateDescriptor<>("chain-last-head-seq", Types.LONG));
        repeats = getRuntimeContext().getMetricGroup().counter("repeatedEventsNotCounted");
        collisions = getRuntimeContext().getMetricGroup().counter("idCollisions");
        links = getRuntimeContext().getMetricGroup().counter("chainLinks");
        signer = signingKeyFile == null ? null : HeadSigner.load(java.nio.file.Path.of(signingKeyFile));
    }

    @Override
    public void processElement(IngestedEvent e, Context ctx, Collector<IngestedEvent> out) throws Exception {
        FirstCopies copies = remembered();
        ids.hash(e.event.id);
        long line = ids.line(e.lineSha256);
        long first = copies.lineOf(ids.high, ids.low);
        if (first != FirstCopies.NOT_SEEN) {
            if (first == FirstCopies.UNKNOWN_LINE || line == FirstCopies.UNKNOWN_LINE || first == line) {
                repeats.inc();
            } else {
                collisions.inc();
                ctx.output(COLLISIONS, collision(e));
            }
            return;
        }
        long eventTime = ctx.timestamp() == null ? e.event.eventTimeMillis : ctx.timestamp();
        long windowEnd = eventTime - Math.floorMod(eventTime, windowMillis) + windowMillis;
        long forgetAt = windowEnd - 1 + allowedLatenessMillis;
        copies.add(ids.high, ids.low, line, forgetAt);
        firstCopies.update(copies);
        ctx.timerService().registerEventTimeTimer(forgetAt);

        Long seq = lastSeq.value();
        String previous = lastDigest.value();
        if (chain != null) {
            e.chain = chain;
            if (seq == null) ctx.timerService().registerEventTimeTimer(END_OF_INPUT); // the last head
        }
        e.chainSeq = (seq == null ? 0 : seq) + 1;
        org.bson.Document document = EventDocument.of(e); // without chain fields: the digest is not set yet
        e.chainDigest = linker.link(previous == null ? "" : previous, document);
        e.document = document.append(EventDocument.SEQ_FIELD, e.chainSeq).append(EventDocument.DIGEST_FIELD, e.chainDigest);
        lastSeq.update(e.chainSeq);
        lastDigest.update(e.chainDigest);
        lastEventId.update(e.event.id);
        lastEventTime.update(e.event.eventTimeMillis);
        links.inc();
        if (headDueAt.value() == null) {
            long due = ctx.timerService().currentProcessingTime() + headIntervalMillis;
            headDueAt.update(due);
            ctx.timerService().registerProcessingTimeTimer(due);
        }
        out.collect(e);
    }

    @Override
    public void onTimer(long timestamp, OnTimerContext ctx, Collector<IngestedEvent> out) throws Exception {
        if (ctx.timeDomain() == TimeDomain.PROCESSING_TIME) {
            headDueAt.clear();
            writeHead(ctx, timestamp);
            return;
        }
        if (timestamp == END_OF_INPUT) {
            writeHead(ctx, ctx.timerService().currentProcessingTime());
        }
        FirstCopies copies = firstCopies.value();
        if (copies == null) return;
        // everything due by the watermark at once: the timers of the minutes it passed with it find none
        if (!copies.forgetUpTo(Math.max(timestamp, ctx.timerService().currentWatermark()))) return;
        if (copies.size() == 0) {
            firstCopies.clear();
        } else {
            firstCopies.update(copies);
        }
    }

    /** A head for the chain's last link, unless the last head written is that link's. */
    private void writeHead(OnTimerContext ctx, long recordedAt) throws Exception {
        Long seq = lastSeq.value();
        Long written = lastHeadSeq.value();
        if (seq != null && (written == null || seq > written)) { // written: the previous head's seq
            ChainHead head = new ChainHead(ctx.getCurrentKey(), seq, lastDigest.value(), lastEventId.value(),
                    lastEventTime.value(), recordedAt);
            head.chain = chain;
            head.previousSeq = written;
            if (signer != null) signer.sign(head);
            ctx.output(HEADS, head);
            lastHeadSeq.update(seq);
        }
    }

    /** This server's remembered ids; the first time after a restore from an older checkpoint, moved over from there. */
    private FirstCopies remembered() throws Exception {
        FirstCopies copies = firstCopies.value();
        if (copies != null) return copies;
        copies = new FirstCopies();
        Iterator<Map.Entry<String, Tuple2<Long, String>>> before = firstCopiesBefore.iterator();
        if (before.hasNext()) {
            while (before.hasNext()) {
                Map.Entry<String, Tuple2<Long, String>> entry = before.next();
                ids.hash(entry.getKey());
                if (copies.lineOf(ids.high, ids.low) == FirstCopies.NOT_SEEN) {
                    copies.add(ids.high, ids.low, ids.line(entry.getValue().f1), entry.getValue().f0);
                }
            }
            firstCopiesBefore.clear();
            firstCopies.update(copies);
        }
        return copies;
    }

    static DeadLetter collision(IngestedEvent e) {
        byte[] document = EventDocument.of(e).toJson().getBytes(StandardCharsets.UTF_8);
        DeadLetter d = DeadLetter.of(DeadLetter.STAGE_STORE, "id collision: a different record with id " + e.event.id
                + " came first (the stored event " + e.event.id + " has another line_sha256; this one's is " + e.lineSha256
                + "). Two sources share a server name, or the server reused a record id; this record is kept here, not"
                + " stored as an event",
                null, document, e.origin);
        d.id = EventDocument.collisionId(e.event.id, e.lineSha256);
        d.server = e.event.server;
        d.format = e.event.format;
        d.sourceFile = e.event.sourceFile;
        return d;
    }
}
