package io.auditpipe.reader;

import io.auditpipe.enrich.ComplianceSettings;
import io.auditpipe.enrich.Enricher;
import io.auditpipe.enrich.SensitiveDataMasker;
import io.auditpipe.parser.AuditEvent;
import io.auditpipe.parser.AuditFormats;
import io.auditpipe.parser.Digests;
import io.auditpipe.parser.ParseResult;
import io.auditpipe.parser.SourceDescriptor;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.TreeSet;

/**
 * Reads one record as the collector shipped it (its source key and its bytes) into what the rest of
 * the pipeline may see: the parsed, enriched and masked event, or the reason it cannot be one with
 * its bytes masked, or nothing when the message is only the file's framing. The job's Kafka source,
 * {@code auditpipe parse} and the benchmarks read records through this one class, so they cannot
 * disagree. Never throws on bad input.
 *
 * <p>Masking (docs/compliance.md): the event's fields and the stored original record are masked,
 * and {@code line_sha256} is the digest of the masked record (a digest of a line with a card number
 * in it could be reversed by trying the few unknown digits). A failure keeps its bytes masked
 * (every other byte as it was), and its reason masked.
 *
 * <p>One instance per thread: the enricher keeps buffers.
 */
public final class RecordReader {
    /**
     * The collector could not ship the line whole (a NUL byte, longer than max_line_size): the key
     * says where it is; or the message is the collector's report of lines it lost (the key's {@code
     * lost}).
     */
    public static final String STAGE_COLLECT = "collect";

    /** The message could not be parsed (bad key, bad line, unknown format). */
    public static final String STAGE_PARSE = "parse";

    private final Enricher enricher;
    private final boolean withOriginal;

    /** The last key read and what it says: a file's records come under one key, read once. */
    private byte[] lastKey;

    private SourceDescriptor lastSource;

    /**
     * @param withOriginal false: events without what only the store and the archive keep, the
     *     masked original record and its {@code line_sha256} (a second pass of the masker over the
     *     whole line and a SHA-256 per record); the alert rules read records so
     */
    public RecordReader(Enricher enricher, boolean withOriginal) {
        this.enricher = enricher;
        this.withOriginal = withOriginal;
    }

    public RecordReader(ComplianceSettings settings) {
        this(new Enricher(settings), true);
    }

    /**
     * What one record became. Exactly one of {@link #event} and {@link #failure} is set, or neither
     * for framing.
     *
     * @param event the event, enriched and masked
     * @param original the original record, masked (UTF-8); null when read without it
     * @param lineSha256 SHA-256 (hex) of {@link #original}'s bytes; null when read without it
     */
    public record Read(AuditEvent event, String original, String lineSha256, Failure failure) {

        /** Only the file's framing, no record ({@link ParseResult#framing}). */
        public boolean isFraming() {
            return event == null && failure == null;
        }
    }

    /**
     * Why a record is no event, with its bytes and reason masked, and the source when its key could
     * be read.
     *
     * @param value the record's bytes, masked
     * @param masked what was masked in them (pan, a configured pattern's name); null when nothing
     * @param source null when the key itself could not be read
     */
    public record Failure(
            String stage,
            String reason,
            byte[] value,
            List<String> masked,
            SourceDescriptor source) {}

    private static final Read FRAMING = new Read(null, null, null, null);

    /** {@link #read(byte[], byte[], long)} received now. */
    public Read read(byte[] key, byte[] value) {
        return read(key, value, System.currentTimeMillis());
    }

    /**
     * @param receivedMillis when the record was received (the Kafka record's time): the year of a
     *     syslog header's time written without one
     */
    public Read read(byte[] key, byte[] value, long receivedMillis) {
        byte[] bytes = value == null ? new byte[0] : value;
        SourceDescriptor source;
        if (key != null && Arrays.equals(key, lastKey)) {
            source = lastSource;
        } else {
            try {
                source = SourceDescriptor.parseKey(key);
            } catch (SourceDescriptor.InvalidSourceKeyException e) {
                return failed(STAGE_PARSE, e.getMessage(), value, null);
            }
            lastKey = key.clone();
            lastSource = source;
        }
        if (source.lost() != null) {
            return failed(STAGE_COLLECT, source.lost().describe(), bytes, source);
        }
        if (source.cut() != null) {
            return failed(STAGE_COLLECT, source.cut().describe(bytes.length), bytes, source);
        }
        ParseResult result;
        try {
            result = AuditFormats.parse(bytes, source, receivedMillis);
        } catch (RuntimeException e) {
            result = ParseResult.failed("parser error: " + e);
        }
        if (result.isFraming()) {
            return FRAMING;
        }
        if (!result.isOk()) {
            return failed(STAGE_PARSE, result.failureReason(), value, source);
        }
        AuditEvent event = enricher.enrich(result.event());
        if (!withOriginal) {
            return new Read(event, null, null, null);
        }
        SensitiveDataMasker masker = enricher.masker();
        byte[] stored =
                masker.mask(value); // masking keeps every byte that is not a match: still UTF-8
        if (stored != value) {
            TreeSet<String> masked = new TreeSet<>(masker.find(value));
            if (event.masked != null) masked.addAll(event.masked);
            event.masked = new ArrayList<>(masked);
        }
        return new Read(
                event, new String(stored, StandardCharsets.UTF_8), Digests.sha256Hex(stored), null);
    }

    private Read failed(String stage, String reason, byte[] value, SourceDescriptor source) {
        SensitiveDataMasker masker = enricher.masker();
        byte[] kept = value == null ? null : masker.mask(value);
        List<String> masked = kept != value ? masker.find(value) : null;
        return new Read(
                null,
                null,
                null,
                new Failure(stage, masker.mask(reason).text(), kept, masked, source));
    }
}
