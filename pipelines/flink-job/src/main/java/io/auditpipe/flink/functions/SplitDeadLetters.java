package io.auditpipe.flink.functions;

import io.auditpipe.flink.records.DeadLetter;
import io.auditpipe.flink.records.IngestedEvent;
import io.auditpipe.flink.records.ParsedRecord;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.metrics.Counter;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;

/** Events go on, dead letters to the side output {@link #DEAD_LETTERS}. */
public class SplitDeadLetters extends ProcessFunction<ParsedRecord, IngestedEvent> {
    private static final long serialVersionUID = 1L;

    public static final OutputTag<DeadLetter> DEAD_LETTERS = new OutputTag<>("dead-letters") {};

    private transient Counter untrustedEventTimes;

    @Override
    public void open(OpenContext openContext) {
        untrustedEventTimes = getRuntimeContext().getMetricGroup().counter("untrustedEventTimes");
    }

    @Override
    public void processElement(ParsedRecord r, Context ctx, Collector<IngestedEvent> out) {
        if (r.event != null) {
            if (!r.event.eventTimeTrusted) {
                untrustedEventTimes.inc();
            }
            out.collect(r.event);
        } else {
            ctx.output(DEAD_LETTERS, r.deadLetter);
        }
    }
}
