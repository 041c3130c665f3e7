package io.auditpipe.flink.functions;

import io.auditpipe.flink.records.IngestedEvent;

import org.apache.flink.api.java.functions.KeySelector;

/** Keys events by their id ({@code <server>/<record>}), for {@link DropRepeatedEvents}. */
public class EventIdSelector implements KeySelector<IngestedEvent, String> {
    private static final long serialVersionUID = 1L;

    @Override
    public String getKey(IngestedEvent e) {
        return e.event.id;
    }
}
