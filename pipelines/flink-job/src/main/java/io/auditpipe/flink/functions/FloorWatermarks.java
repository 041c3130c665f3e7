package io.auditpipe.flink.functions;

import io.auditpipe.flink.records.ParsedRecord;
import org.apache.flink.api.common.eventtime.Watermark;
import org.apache.flink.api.common.eventtime.WatermarkGenerator;
import org.apache.flink.api.common.eventtime.WatermarkOutput;

/**
 * Watermarks of a bounded input that knows, at each record, the earliest stream time still to come
 * ({@link ParsedRecord#laterNotBefore}: imported history, {@code TimeFloors}): the watermark stands
 * just below it, so no record is ever behind it, whatever the order of the records' times, and each
 * event-time window closes as soon as no record of it is left. A record that does not know ({@code
 * Long.MIN_VALUE}) leaves the watermark where it is; an input none of whose records knows closes
 * its windows at its end.
 */
public class FloorWatermarks implements WatermarkGenerator<ParsedRecord> {
    private long floor = Long.MIN_VALUE;

    @Override
    public void onEvent(ParsedRecord record, long timestamp, WatermarkOutput output) {
        floor = Math.max(floor, record.laterNotBefore);
    }

    @Override
    public void onPeriodicEmit(WatermarkOutput output) {
        if (floor != Long.MIN_VALUE) output.emitWatermark(new Watermark(floor - 1));
    }
}
