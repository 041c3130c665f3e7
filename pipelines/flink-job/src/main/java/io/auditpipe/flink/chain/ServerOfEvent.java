package io.auditpipe.flink.chain;

import io.auditpipe.flink.records.IngestedEvent;
import org.apache.flink.api.java.functions.KeySelector;

/** Keys events by their server: one chain per server ({@link ChainEvents}). */
public class ServerOfEvent implements KeySelector<IngestedEvent, String> {
    private static final long serialVersionUID = 1L;

    @Override
    public String getKey(IngestedEvent e) {
        return e.event.server;
    }
}
