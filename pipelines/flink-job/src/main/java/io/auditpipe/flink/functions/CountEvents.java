package io.auditpipe.flink.functions;

import org.apache.flink.api.common.functions.AggregateFunction;

/**
 * Counts events; a window keeps one long per key and window (the stats' minute, the rollups' day).
 */
public class CountEvents<T> implements AggregateFunction<T, Long, Long> {
    private static final long serialVersionUID = 1L;

    @Override
    public Long createAccumulator() {
        return 0L;
    }

    @Override
    public Long add(T value, Long acc) {
        return acc + 1;
    }

    @Override
    public Long getResult(Long acc) {
        return acc;
    }

    @Override
    public Long merge(Long a, Long b) {
        return a + b;
    }

    /** Counts the events that stats records stand for ({@link PreCountStats} sums them). */
    public static class OfStats extends CountEvents<io.auditpipe.flink.records.StatsEvent> {
        private static final long serialVersionUID = 1L;

        @Override
        public Long add(io.auditpipe.flink.records.StatsEvent value, Long acc) {
            return acc + value.count;
        }
    }
}
