package io.auditpipe.flink.functions;

import io.auditpipe.enrich.EvidenceKind;
import io.auditpipe.flink.records.IngestedEvent;
import org.apache.flink.api.common.functions.FilterFunction;

/**
 * The stored events that are evidence of some {@link EvidenceKind}: they go to the evidence
 * collection too.
 */
public final class IsEvidence implements FilterFunction<IngestedEvent> {
    private static final long serialVersionUID = 1L;

    @Override
    public boolean filter(IngestedEvent e) {
        return EvidenceKind.any(e.event);
    }
}
