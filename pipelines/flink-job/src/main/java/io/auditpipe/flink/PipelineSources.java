package io.auditpipe.flink;

import io.auditpipe.flink.records.ParsedRecord;

import org.apache.flink.api.connector.source.Source;

import java.util.Objects;

/**
 * What the pipeline reads: the raw records for the store path, and the same records read again by
 * a source of the alert rules' own ({@link AuditPipeline} says why). Both non-null; a bounded source
 * (a file, a test's list) runs the same graph as Kafka.
 */
public record PipelineSources(Source<ParsedRecord, ?, ?> records, Source<ParsedRecord, ?, ?> recordsForAlerts) {
    public PipelineSources {
        Objects.requireNonNull(records, "records");
        Objects.requireNonNull(recordsForAlerts, "recordsForAlerts");
    }
}
