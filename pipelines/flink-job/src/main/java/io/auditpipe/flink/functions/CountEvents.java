package io.auditpipe.flink.functions;

import io.auditpipe.flink.records.StatsEvent;

import org.apache.flink.api.common.functions.AggregateFunction;

/** Counts events; the window keeps one long per key and minute. */
public class CountEvents implements AggregateFunction<StatsEvent, Long, Long> {
    private static final long serialVersionUID = 1L;

    @Override
    public Long createAccumulator() { return 0L; }

    @Override
    public Long add(StatsEvent value, Long acc) { return acc + 1; }

    @Override
    public Long getResult(Long acc) { return acc; }

    @Override
    public Long merge(Long a, Long b) { return a + b; }
}
