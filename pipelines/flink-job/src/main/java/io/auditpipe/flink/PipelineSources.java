package io.auditpipe.flink;

import io.auditpipe.flink.records.ParsedRecord;
import java.util.Objects;
import java.util.Optional;
import org.apache.flink.api.connector.source.Source;

/**
 * What the pipeline reads: the raw records for the store path, and the same records read again by a
 * source of the alert rules' own ({@link AuditPipeline} says why); a bounded source (a file, a
 * test's list) runs the same graph as Kafka. Imported history ({@link #history}) is read once,
 * raises no alerts, and is linked in a chain of its own ({@code chain}: the import run's name).
 * {@link #sharedWithAlerts} is the design the job does not take, for the bench to compare: the
 * alert rules read the store path's events, each record fetched and parsed once.
 */
public record PipelineSources(
        Source<ParsedRecord, ?, ?> records,
        Optional<Source<ParsedRecord, ?, ?>> recordsForAlerts,
        Optional<String> chain,
        boolean alertsShareRecords) {
    public PipelineSources {
        Objects.requireNonNull(records, "records");
        Objects.requireNonNull(recordsForAlerts, "recordsForAlerts");
        Objects.requireNonNull(chain, "chain");
        if ((recordsForAlerts.isPresent() || alertsShareRecords) == chain.isPresent()
                || (recordsForAlerts.isPresent() && alertsShareRecords)) {
            throw new IllegalArgumentException(
                    "live records have alerts (an alert source, or shared records) and no chain name;"
                            + " imported history the reverse");
        }
    }

    /** What the live job reads: the records, and the alert rules' own reading of them. */
    public PipelineSources(
            Source<ParsedRecord, ?, ?> records, Source<ParsedRecord, ?, ?> recordsForAlerts) {
        this(records, Optional.of(recordsForAlerts), Optional.empty(), false);
    }

    /** Imported history: records read once, linked in the chain {@code chain}. */
    public static PipelineSources history(Source<ParsedRecord, ?, ?> records, String chain) {
        return new PipelineSources(records, Optional.empty(), Optional.of(chain), false);
    }

    /**
     * Live records read once, the alert rules reading the store path's events (the bench's
     * comparison).
     */
    public static PipelineSources sharedWithAlerts(Source<ParsedRecord, ?, ?> records) {
        return new PipelineSources(records, Optional.empty(), Optional.empty(), true);
    }
}
