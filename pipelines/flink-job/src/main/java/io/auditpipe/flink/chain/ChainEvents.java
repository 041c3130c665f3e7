package io.auditpipe.flink.chain;

import io.auditpipe.flink.document.EventDocument;
import io.auditpipe.flink.functions.WriteBackOperator;
import io.auditpipe.flink.records.DeadLetter;
import io.auditpipe.flink.records.IngestedEvent;
import io.auditpipe.parser.RecordNumbers;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.metrics.Counter;
import org.apache.flink.streaming.api.TimeDomain;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;

/**
 * Keyed by server: passes the first copy of each event, and links it into the server's chain
 * ({@link EventChain}) before anything stores or archives it. Its pieces: {@link FirstCopyFilter}
 * drops the copies, {@link EventChain.Linker} makes the links, {@link FormerLayouts} moves the
 * state of former layouts over; this operator holds the tips and writes the heads.
 *
 * <p><b>First copies.</b> Collectors and brokers re-send lines (a collector restart re-reads lines
 * since its last saved position; a broker failover can make an idempotent producer re-send a
 * batch). A copy is dropped here, so that the stats count each event id once and the chain links it
 * once. A copy whose line differs from the first one's ({@code line_sha256}) is no copy: it is an
 * id collision (two sources under one server name, a server reusing record ids), sent to {@link
 * #COLLISIONS} as a dead letter; the store keeps the first record. An id is remembered until the
 * watermark passes the end of its minute plus the stats' allowed lateness (then the window would
 * not count a copy anyway), in a map keyed by ({@link RememberedId}) that time and the id's 128-bit
 * hash, whose value is a 64-bit fingerprint of the first line's digest. A copy has its original's
 * time, so it is looked up under the same key; a collision is found when its record falls in the
 * same minute as the first one (always for the formats whose record id holds the time).
 *
 * <p><b>Numbered records.</b> Percona's records carry a number in a sequence ({@link
 * RecordNumbers}); the chain remembers those as runs of numbers per sequence ({@link
 * NumberedRuns}), a few per server whatever the rate, instead of an entry per id: a copy is a
 * number inside a run whose record's time lies within the run's. Those runs are at most {@link
 * NumberedRuns#MAX_RUNS} per server; a number that would start one more is remembered by its id in
 * the map, as other formats' are.
 *
 * <p><b>State per event, for the RocksDB backend.</b> An event looks its id up in the map (a
 * RocksDB lookup of a few dozen bytes), so that an incremental checkpoint holds the entries added
 * since the last one, not every id remembered. What an event changes is kept in memory and written
 * into state once per checkpoint ({@link WriteBackOperator}: run it there): the server's {@link
 * ChainTip}, its {@link NumberedRuns}, and the ids passed since the last checkpoint ({@link
 * PassedIds}), added in one write batch. Forgetting iterates the map: on RocksDB, whose entries
 * come in key order (the time to forget first), it stops at the first id not yet due ({@code
 * sortedState}); on the heap backend it reads them all.
 *
 * <p><b>Why keyed by server, and why that is deterministic.</b> A server's lines arrive on one
 * Kafka partition (the key is the source, and configuration allows one source per server), read by
 * one source subtask and sent here over one channel, so the order of a server's records here is the
 * partition's order, on every replay. Restored from a checkpoint, the chain continues from the
 * checkpointed link over the same records in the same order, and so gives every event the link it
 * had before: a document stored before a crash and replayed after it is the same document (its
 * insert is a duplicate key, ignored).
 *
 * <p><b>Heads.</b> At most once per head interval (processing time), a server whose chain grew gets
 * a {@link ChainHead} on {@link #HEADS}: the anchors that {@code auditpipe verify} checks
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
public class ChainEvents extends KeyedProcessFunction<String, IngestedEvent, IngestedEvent>
        implements WriteBackOperator.WritesBack<String> {
    private static final long serialVersionUID = 1L;

    /** Records whose id belongs to a different, earlier line: dead letters of stage "store". */
    public static final OutputTag<DeadLetter> COLLISIONS = new OutputTag<>("id-collisions") {};

    /** Where each server's chain stood, at most once per head interval. */
    public static final OutputTag<ChainHead> HEADS = new OutputTag<>("chain-heads") {};

    /**
     * The watermark at the end of a bounded input: an imported chain's last head is written then.
     */
    static final long END_OF_INPUT = Long.MAX_VALUE;

    private final long windowMillis;
    private final long allowedLatenessMillis;
    private final long headIntervalMillis;

    /** The imported chain every event is linked in, null for the live chain. */
    private final String chain;

    /**
     * The files of the key that signs the heads and the key that authenticates the links; read
     * where the operator runs.
     */
    private final ChainKeys keys;

    /**
     * Whether the state backend iterates a map in key order (RocksDB): forgetting then reads only
     * what is due.
     */
    private final boolean sortedState;

    /** First copies passed, copies counted, collisions sent aside ({@link FirstCopyFilter}). */
    private transient FirstCopyFilter copies;

    /** What former layouts of this state kept, moved over once per server. */
    private transient FormerLayouts former;

    /** Where the chain stands, as of the last checkpoint ({@link #tips} holds it since). */
    private transient ValueState<ChainTip> tip;

    /**
     * The tips of the servers seen since the last checkpoint, written into {@link #tip} before the
     * next one.
     */
    private transient Map<String, ChainTip> tips;

    private transient ValueState<Long> lastHeadSeq;
    private transient EventChain.Linker linker;
    private transient Counter links;
    private transient HeadSigner signer;
    private transient LinkKey linkKey;

    public ChainEvents(Duration window, Duration allowedLateness, Duration headInterval) {
        this(window, allowedLateness, headInterval, null, ChainKeys.NONE, false);
    }

    /**
     * {@code chain}: the imported chain to link every event in (null: the server's live chain);
     * {@code keys}: the key that signs the heads and the one that authenticates the links; {@code
     * sortedState}: the state backend iterates a map in key order (RocksDB).
     */
    public ChainEvents(
            Duration window,
            Duration allowedLateness,
            Duration headInterval,
            String chain,
            ChainKeys keys,
            boolean sortedState) {
        this.windowMillis = window.toMillis();
        this.allowedLatenessMillis = allowedLateness.toMillis();
        this.headIntervalMillis = headInterval.toMillis();
        this.chain = chain;
        this.keys = keys == null ? ChainKeys.NONE : keys;
        this.sortedState = sortedState;
    }

    @Override
    public void open(OpenContext openContext) {
        copies = new FirstCopyFilter(getRuntimeContext(), sortedState);
        former = new FormerLayouts(getRuntimeContext());
        tip =
                getRuntimeContext()
                        .getState(
                                new ValueStateDescriptor<>(
                                        "chain-tip", ChainTip.Serializer.INSTANCE));
        lastHeadSeq =
                getRuntimeContext()
                        .getState(new ValueStateDescriptor<>("chain-last-head-seq", Types.LONG));
        tips = new HashMap<>();
        linker = new EventChain.Linker();
        links = getRuntimeContext().getMetricGroup().counter("chainLinks");
        signer = keys.signer();
        linkKey = keys.linkKey();
    }

    @Override
    public void processElement(IngestedEvent e, Context ctx, Collector<IngestedEvent> out)
            throws Exception {
        ChainTip t = tipOf(ctx.getCurrentKey());
        long eventTime = ctx.timestamp() == null ? e.event.eventTimeMillis : ctx.timestamp();
        long windowEnd = eventTime - Math.floorMod(eventTime, windowMillis) + windowMillis;
        long forgetAt = windowEnd - 1 + allowedLatenessMillis;
        if (!copies.first(e, ctx, t, forgetAt)) return;
        if (forgetAt != t.forgetTimerAt || forgetAt <= ctx.timerService().currentWatermark()) {
            ctx.timerService().registerEventTimeTimer(forgetAt);
            t.forgetTimerAt = forgetAt;
        }

        if (chain != null) {
            e.chain = chain;
            if (t.seq == 0)
                ctx.timerService().registerEventTimeTimer(END_OF_INPUT); // the last head
        }
        linker.append(e, t, linkKey);
        links.inc();
        if (t.headDueAt == ChainTip.NONE) {
            t.headDueAt = ctx.timerService().currentProcessingTime() + headIntervalMillis;
            ctx.timerService().registerProcessingTimeTimer(t.headDueAt);
        }
        out.collect(e);
    }

    @Override
    public void onTimer(long timestamp, OnTimerContext ctx, Collector<IngestedEvent> out)
            throws Exception {
        ChainTip t = tipOf(ctx.getCurrentKey());
        if (ctx.timeDomain() == TimeDomain.PROCESSING_TIME) {
            t.headDueAt = ChainTip.NONE;
            writeHead(ctx, t, timestamp);
            return;
        }
        if (timestamp == END_OF_INPUT) {
            writeHead(ctx, t, ctx.timerService().currentProcessingTime());
        }
        // everything due by the watermark at once: the timers of the minutes it passed with it find
        // none
        long due = Math.max(timestamp, ctx.timerService().currentWatermark());
        copies.forget(ctx.getCurrentKey(), due);
        if (t.seq == 0) { // only ids moved over from a former layout's state, no link yet
            tips.remove(ctx.getCurrentKey());
            tip.clear();
            copies.clearRuns(ctx.getCurrentKey());
        }
    }

    /**
     * The server's tip: from memory since the last checkpoint, else from state (or moved over, or
     * new).
     */
    private ChainTip tipOf(String server) throws Exception {
        ChainTip t = tips.get(server);
        if (t == null) {
            t = tip.value();
            if (t == null) t = former.moveOver(copies);
            tips.put(server, t);
        }
        return t;
    }

    @Override
    public void writeBack(java.util.function.Consumer<String> setKey) throws Exception {
        for (Map.Entry<String, ChainTip> e : tips.entrySet()) {
            setKey.accept(e.getKey());
            tip.update(e.getValue());
        }
        tips.clear();
        copies.writeBack(setKey);
    }

    /** A head for the chain's last link, unless the last head written is that link's. */
    private void writeHead(OnTimerContext ctx, ChainTip t, long recordedAt) throws Exception {
        Long written = lastHeadSeq.value();
        if (t.seq > 0 && (written == null || t.seq > written)) { // written: the previous head's seq
            ChainHead head =
                    new ChainHead(
                            ctx.getCurrentKey(),
                            t.seq,
                            t.digest,
                            t.lastEventId,
                            t.lastEventTime,
                            recordedAt);
            head.chain = chain;
            head.previousSeq = written;
            if (signer != null) signer.sign(head);
            ctx.output(HEADS, head);
            lastHeadSeq.update(t.seq);
        }
    }

    static DeadLetter collision(IngestedEvent e) {
        byte[] document = EventDocument.of(e).toJson().getBytes(StandardCharsets.UTF_8);
        DeadLetter d =
                DeadLetter.of(
                        DeadLetter.STAGE_STORE,
                        "id collision: a different record with id "
                                + e.event.id
                                + " came first (the stored event "
                                + e.event.id
                                + " has another line_sha256; this one's is "
                                + e.lineSha256
                                + "). Two sources share a server name, or the server reused a record id; this record is kept here, not"
                                + " stored as an event",
                        null,
                        document,
                        e.origin);
        d.id = EventDocument.collisionId(e.event.id, e.lineSha256);
        d.server = e.event.server;
        d.format = e.event.format;
        d.sourceFile = e.event.sourceFile;
        return d;
    }
}
