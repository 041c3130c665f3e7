package io.auditpipe.flink.functions;

import io.auditpipe.flink.records.ParsedRecord;
import java.time.Duration;
import org.apache.flink.api.common.eventtime.Watermark;
import org.apache.flink.api.common.eventtime.WatermarkGenerator;
import org.apache.flink.api.common.eventtime.WatermarkOutput;

/**
 * Bounded out-of-orderness watermarks (per Kafka partition, generated in the source) that only
 * trusted event time moves. Dead letters and events whose own time is too far ahead ({@link
 * ParsedRecord#drivesWatermark()}) are timestamped but never advance the watermark: one line from
 * the far future would otherwise make every later, correct event of its partition, from any server
 * sharing it, too late for its minute.
 */
public class TrustedEventTimeWatermarks implements WatermarkGenerator<ParsedRecord> {
    private final long outOfOrdernessMillis;
    private long maxTimestamp;

    public TrustedEventTimeWatermarks(Duration outOfOrderness) {
        this.outOfOrdernessMillis = outOfOrderness.toMillis();
        this.maxTimestamp = Long.MIN_VALUE + outOfOrdernessMillis + 1;
    }

    @Override
    public void onEvent(ParsedRecord record, long timestamp, WatermarkOutput output) {
        if (record.drivesWatermark()) {
            maxTimestamp = Math.max(maxTimestamp, timestamp);
        }
    }

    @Override
    public void onPeriodicEmit(WatermarkOutput output) {
        output.emitWatermark(new Watermark(maxTimestamp - outOfOrdernessMillis - 1));
    }
}
