package io.auditpipe.flink.functions;

import io.auditpipe.flink.records.StatsEvent;
import io.auditpipe.flink.records.StatsKey;
import org.apache.flink.api.java.functions.KeySelector;

/** Keys events by the dimensions of the one-minute stats. */
public class StatsKeySelector implements KeySelector<StatsEvent, StatsKey> {
    private static final long serialVersionUID = 1L;

    @Override
    public StatsKey getKey(StatsEvent e) {
        return e.key;
    }
}
