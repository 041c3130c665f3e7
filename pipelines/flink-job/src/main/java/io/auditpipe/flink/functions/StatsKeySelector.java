package io.auditpipe.flink.functions;

import io.auditpipe.flink.records.IngestedEvent;
import io.auditpipe.flink.records.StatsKey;

import org.apache.flink.api.java.functions.KeySelector;

/** Keys events by the dimensions of the one-minute stats. */
public class StatsKeySelector implements KeySelector<IngestedEvent, StatsKey> {
    private static final long serialVersionUID = 1L;

    @Override
    public StatsKey getKey(IngestedEvent e) {
        return StatsKey.of(e.event);
    }
}
