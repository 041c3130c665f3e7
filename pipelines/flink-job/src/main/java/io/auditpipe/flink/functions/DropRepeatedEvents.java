package io.auditpipe.flink.functions;

import io.auditpipe.flink.records.DeadLetter;
import io.auditpipe.flink.records.IngestedEvent;
import io.auditpipe.flink.sink.StoreDocuments;

import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.metrics.Counter;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;

import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * Keyed by event id: passes the first copy of each event on to the one-minute stats and drops
 * the copies that collectors and brokers re-send (a collector restart re-reads lines since its
 * last saved position; a broker failover can make an idempotent producer re-send a batch). The
 * events collection absorbs such copies by {@code _id}; the counts need this operator to do the
 * same, so that they count each event id once.
 *
 * <p>A copy whose line differs from the first one's ({@code line_sha256}) is no copy: it is an id
 * collision (two sources under one server name, a server reusing record ids). It is not counted,
 * and goes to {@link #COLLISIONS} as a dead letter; the store keeps the first record.
 *
 * <p>An id is remembered until the watermark passes the end of its minute plus the stats'
 * allowed lateness, an event-time timer then clears it: from that point the window no longer
 * accepts the event anyway, so a copy arriving later could not be counted twice. (It is reported
 * by the window as too late for the stats, like any other event that late.) State therefore holds
 * the ids of the minutes still open, about (1 minute + allowed lateness) x event rate.
 */
public class DropRepeatedEvents extends KeyedProcessFunction<String, IngestedEvent, IngestedEvent> {
    private static final long serialVersionUID = 1L;

    private final long windowMillis;
    private final long allowedLatenessMillis;
    /** Records whose id belongs to a different, earlier line: dead letters of stage "store". */
    public static final OutputTag<DeadLetter> COLLISIONS = new OutputTag<>("id-collisions") {};

    private transient ValueState<Long> forgetAt;
    private transient ValueState<String> firstDigest;
    private transient Counter repeats;
    private transient Counter collisions;

    public DropRepeatedEvents(Duration window, Duration allowedLateness) {
        this.windowMillis = window.toMillis();
        this.allowedLatenessMillis = allowedLateness.toMillis();
    }

    @Override
    public void open(OpenContext openContext) {
        forgetAt = getRuntimeContext().getState(new ValueStateDescriptor<>("forget-at", Types.LONG));
        firstDigest = getRuntimeContext().getState(new ValueStateDescriptor<>("first-line-sha256", Types.STRING));
        repeats = getRuntimeContext().getMetricGroup().counter("repeatedEventsNotCounted");
        collisions = getRuntimeContext().getMetricGroup().counter("idCollisions");
    }

    @Override
    public void processElement(IngestedEvent e, Context ctx, Collector<IngestedEvent> out) throws Exception {
        if (forgetAt.value() != null) {
            String first = firstDigest.value();
            if (first == null || e.lineSha256 == null || first.equals(e.lineSha256)) {
                repeats.inc();
            } else {
                collisions.inc();
                ctx.output(COLLISIONS, collision(e, first));
            }
            return;
        }
        firstDigest.update(e.lineSha256);
        long eventTime = ctx.timestamp() == null ? e.event.eventTimeMillis : ctx.timestamp();
        long windowEnd = eventTime - Math.floorMod(eventTime, windowMillis) + windowMillis;
        long at = windowEnd - 1 + allowedLatenessMillis;
        forgetAt.update(at);
        ctx.timerService().registerEventTimeTimer(at);
        out.collect(e);
    }

    @Override
    public void onTimer(long timestamp, OnTimerContext ctx, Collector<IngestedEvent> out) {
        forgetAt.clear();
        firstDigest.clear();
    }

    static DeadLetter collision(IngestedEvent e, String firstDigest) {
        byte[] document = StoreDocuments.event(e).toJson().getBytes(StandardCharsets.UTF_8);
        DeadLetter d = DeadLetter.of(DeadLetter.STAGE_STORE, "id collision: a different record with id " + e.event.id
                + " came first (line_sha256 " + firstDigest + ", this one " + e.lineSha256 + "). Two sources share a"
                + " server name, or the server reused a record id; this record is kept here, not stored as an event",
                null, document, e.origin);
        d.id = StoreDocuments.collisionId(e.event.id, e.lineSha256);
        d.server = e.event.server;
        d.format = e.event.format;
        d.sourceFile = e.event.sourceFile;
        return d;
    }
}
