package io.auditpipe.flink.functions;

import io.auditpipe.flink.records.StatsEvent;
import io.auditpipe.flink.records.StatsKey;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.runtime.watermarkstatus.WatermarkStatus;

/**
 * Adds up the stats' events of one key and minute before they cross the shuffle to the one-minute
 * windows, so that a window's state is read and written once per key and minute in a batch, not
 * once per event: on RocksDB each of those is a lookup and a write (docs/scaling.md "State").
 *
 * <p>Nothing is held across a checkpoint or a watermark: the sums go out before the checkpoint's
 * barrier (so they belong to the checkpoint before it, and the operator has no state of its own)
 * and before each watermark is passed on (so every event reaches its window before the watermark
 * that could make it late, as it would have alone), and when {@code maxKeys} sums are held. A
 * record too late for its minute at the watermark this operator has seen (its minute's end plus the
 * allowed lateness passed) goes on alone, so that the window's side output still names each one.
 *
 * <p>That needs the windows' watermark never ahead of this operator's, and so this operator never
 * tells the windows that its input is idle. An idle input would leave the windows' watermark to the
 * other subtasks, and a sum sent after this subtask's input woke again could be late at the window
 * though on time here: one dead letter for a sum of several events, the others neither counted nor
 * named. Nothing stalls for it: every subtask reads every reader's watermarks (the stream before it
 * is keyed by server), so all of them are idle together, and none has a watermark the others lack.
 */
public class PreCountStats extends AbstractStreamOperator<StatsEvent>
        implements OneInputStreamOperator<StatsEvent, StatsEvent> {
    private static final long serialVersionUID = 1L;

    private final long windowMillis;
    private final long allowedLatenessMillis;
    private final int maxKeys;
    private transient Map<Sum, StatsEvent> sums;
    private transient long watermark;

    public PreCountStats(Duration window, Duration allowedLateness, int maxKeys) {
        this.windowMillis = window.toMillis();
        this.allowedLatenessMillis = allowedLateness.toMillis();
        this.maxKeys = maxKeys;
    }

    @Override
    public void open() throws Exception {
        super.open();
        sums = new HashMap<>();
        watermark = Long.MIN_VALUE;
    }

    @Override
    public void processElement(StreamRecord<StatsEvent> record) {
        long time = record.getTimestamp();
        long windowStart = time - Math.floorMod(time, windowMillis);
        if (windowStart + windowMillis - 1 + allowedLatenessMillis <= watermark) {
            output.collect(record); // too late: the window sends it, named, to its side output
            return;
        }
        StatsEvent e = record.getValue();
        Sum key = new Sum(e.key, windowStart);
        StatsEvent sum = sums.get(key);
        if (sum == null) {
            StatsEvent first =
                    new StatsEvent(); // its own: with object reuse, the record may be used again
            first.key = e.key;
            first.id = e.id;
            first.format = e.format;
            first.sourceFile = e.sourceFile;
            first.origin = e.origin;
            first.count = e.count;
            sums.put(key, first);
            if (sums.size() >= maxKeys) flush();
        } else {
            sum.count += e.count;
        }
    }

    @Override
    public void processWatermark(Watermark mark) throws Exception {
        flush();
        watermark = mark.getTimestamp();
        super.processWatermark(mark);
    }

    /**
     * Kept from the windows: an idle input would let their watermark pass this operator's (class
     * comment).
     */
    @Override
    public void processWatermarkStatus(WatermarkStatus status) {}

    @Override
    public void prepareSnapshotPreBarrier(long checkpointId) throws Exception {
        flush();
        super.prepareSnapshotPreBarrier(checkpointId);
    }

    @Override
    public void finish() throws Exception {
        flush();
        super.finish();
    }

    /** Sends every sum held, each timestamped at its minute's start. */
    private void flush() {
        if (sums.isEmpty()) return;
        for (Map.Entry<Sum, StatsEvent> s : sums.entrySet()) {
            output.collect(new StreamRecord<>(s.getValue(), s.getKey().windowStart));
        }
        sums.clear();
    }

    /** What one sum stands for: a stats key in one minute. */
    private record Sum(StatsKey key, long windowStart) {
        Sum {
            Objects.requireNonNull(key);
        }
    }
}
