package io.auditpipe.flink.functions;

import io.auditpipe.flink.records.DeadLetter;
import io.auditpipe.flink.records.IngestedEvent;
import io.auditpipe.flink.records.KafkaOrigin;
import io.auditpipe.flink.records.ParsedRecord;
import io.auditpipe.enrich.ComplianceSettings;
import io.auditpipe.enrich.Enricher;
import io.auditpipe.enrich.SensitiveDataMasker;
import io.auditpipe.parser.AuditEvent;
import io.auditpipe.parser.Digests;
import io.auditpipe.parser.AuditFormats;
import io.auditpipe.parser.ParseResult;
import io.auditpipe.parser.SourceDescriptor;

import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.connector.kafka.source.reader.deserializer.KafkaRecordDeserializationSchema;
import org.apache.flink.util.Collector;
import org.apache.kafka.clients.consumer.ConsumerRecord;

import java.time.Duration;

/**
 * Turns each message of audit.raw into a {@link ParsedRecord}: the parsed and enriched event, or a
 * dead letter with the reason. Parsing happens here, in the source, so that the watermark is
 * generated per Kafka partition from the records' own timestamps (a backlog in one partition does
 * not make another partition's events late). Enrichment and masking happen here too, so that
 * nothing after the source (store, topics, alerts, dead letters) ever sees an unmasked card number.
 * Never throws: a throw here would fail the job on bad input.
 */
public class AuditRecordDeserializer implements KafkaRecordDeserializationSchema<ParsedRecord> {
    private static final long serialVersionUID = 1L;
    /** Default of job option event-time.max-ahead. */
    public static final Duration DEFAULT_MAX_AHEAD = Duration.ofMinutes(5);

    private final long maxAheadMillis;
    private final ComplianceSettings compliance;
    /** False for the alert rules' source: events without their stored original and its digest. */
    private final boolean withOriginal;
    private transient Enricher enricher;

    public AuditRecordDeserializer() {
        this(DEFAULT_MAX_AHEAD, ComplianceSettings.defaults());
    }

    public AuditRecordDeserializer(Duration maxAhead, ComplianceSettings compliance) {
        this(maxAhead, compliance, true);
    }

    private AuditRecordDeserializer(Duration maxAhead, ComplianceSettings compliance, boolean withOriginal) {
        this.maxAheadMillis = maxAhead.toMillis();
        this.compliance = compliance;
        this.withOriginal = withOriginal;
    }

    /**
     * For the alert rules' source (AuditPipelineJob): the same events, parsed, enriched and masked
     * alike, without what only the store and the archive keep: the masked original record and its
     * {@code line_sha256} (a second pass of the masker over the whole line and a SHA-256 per record).
     */
    public static AuditRecordDeserializer forAlerts(Duration maxAhead, ComplianceSettings compliance) {
        return new AuditRecordDeserializer(maxAhead, compliance, false);
    }

    /** Messages that were only a file's framing (see {@link ParseResult#framing}); a job metric. */
    private transient org.apache.flink.metrics.Counter framingMessages;

    @Override
    public void open(org.apache.flink.api.common.serialization.DeserializationSchema.InitializationContext context) {
        framingMessages = context.getMetricGroup().counter("framingMessages");
        enricher = new Enricher(compliance);
    }

    @Override
    public void deserialize(ConsumerRecord<byte[], byte[]> message, Collector<ParsedRecord> out) {
        ParsedRecord r = parse(message.key(), message.value(),
                new KafkaOrigin(message.topic(), message.partition(), message.offset(), message.timestamp()),
                maxAheadMillis, enricher(), withOriginal);
        if (r != null) {
            out.collect(r);
        } else if (framingMessages != null) {
            framingMessages.inc();
        }
    }

    private Enricher enricher() {
        if (enricher == null) enricher = new Enricher(compliance);
        return enricher;
    }

    /** One enricher with the default settings per thread, for the overloads that take none (tests). */
    private static final ThreadLocal<Enricher> DEFAULT_ENRICHER =
            ThreadLocal.withInitial(() -> new Enricher(ComplianceSettings.defaults()));

    /** {@link #parse(byte[], byte[], KafkaOrigin, long, Enricher)} with the default bound and compliance settings. */
    public static ParsedRecord parse(byte[] key, byte[] value, KafkaOrigin origin) {
        return parse(key, value, origin, DEFAULT_MAX_AHEAD.toMillis(), DEFAULT_ENRICHER.get());
    }

    /** With the default compliance settings (nothing classified, card numbers masked). */
    public static ParsedRecord parse(byte[] key, byte[] value, KafkaOrigin origin, long maxAheadMillis) {
        return parse(key, value, origin, maxAheadMillis, DEFAULT_ENRICHER.get());
    }

    /**
     * The whole decision for one message; public for tests and the offline parser. Null when the
     * message is only the file's framing, no record ({@link ParseResult#framing}).
     *
     * <p>Event time is the record's own timestamp, trusted only up to {@code maxAheadMillis} ahead of
     * the Kafka record's timestamp (the time the collector shipped it): a server clock far ahead, or a
     * forged or corrupted timestamp, would otherwise move its partition's watermark and make every
     * older event on that partition too late for its minute. An event beyond the bound is kept with
     * its timestamp as written, flagged {@code event_time_trusted: false}, counted in the minute it was
     * shipped and ignored by the watermarks. The bound compares two recorded times, never the clock
     * of the moment, so a replay decides the same way.
     *
     * <p>Masking (docs/compliance.md): the event's fields and the stored original record are masked,
     * and {@code line_sha256} is the digest of the masked record (a digest of a line with a card
     * number in it could be reversed by trying the few unknown digits). A dead letter keeps its bytes
     * masked (every other byte as it was), and its reason masked.
     */
    public static ParsedRecord parse(byte[] key, byte[] value, KafkaOrigin origin, long maxAheadMillis, Enricher enricher) {
        return parse(key, value, origin, maxAheadMillis, enricher, true);
    }

    /** {@code withOriginal} false: the event without {@code original} and {@code line_sha256} ({@link #forAlerts}). */
    static ParsedRecord parse(byte[] key, byte[] value, KafkaOrigin origin, long maxAheadMillis, Enricher enricher,
                              boolean withOriginal) {
        SensitiveDataMasker masker = enricher.masker();
        SourceDescriptor source;
        try {
            source = SourceDescriptor.parseKey(key);
        } catch (SourceDescriptor.InvalidSourceKeyException e) {
            return ParsedRecord.deadLetter(deadLetter(DeadLetter.STAGE_PARSE, e.getMessage(), key, value, origin, masker));
        }
        if (source.cut() != null) {
            byte[] shipped = value == null ? new byte[0] : value;
            DeadLetter d = deadLetter(DeadLetter.STAGE_COLLECT, source.cut().describe(shipped.length), key, shipped, origin, masker);
            d.server = source.server();
            d.format = source.format();
            d.sourceFile = source.source();
            return ParsedRecord.deadLetter(d);
        }
        ParseResult result;
        try {
            result = AuditFormats.parse(value == null ? new byte[0] : value, source);
        } catch (RuntimeException e) {
            result = ParseResult.failed("parser error: " + e);
        }
        if (result.isFraming()) {
            return null;
        }
        if (!result.isOk()) {
            DeadLetter d = deadLetter(DeadLetter.STAGE_PARSE, result.failureReason(), key, value, origin, masker);
            d.server = source.server();
            d.format = source.format();
            d.sourceFile = source.source();
            return ParsedRecord.deadLetter(d);
        }
        AuditEvent parsed = enricher.enrich(result.event());
        if (!withOriginal) {
            IngestedEvent event = new IngestedEvent(parsed, origin, null);
            event.eventTimeTrusted = parsed.eventTimeMillis <= origin.timestampMillis + maxAheadMillis;
            return ParsedRecord.event(event);
        }
        byte[] stored = masker.mask(value); // masking keeps every byte that is not a match: still UTF-8
        if (stored != value) {
            java.util.TreeSet<String> masked = new java.util.TreeSet<>(masker.find(value));
            if (parsed.masked != null) masked.addAll(parsed.masked);
            parsed.masked = new java.util.ArrayList<>(masked);
        }
        IngestedEvent event = new IngestedEvent(parsed, origin, Digests.sha256Hex(stored));
        event.original = new String(stored, java.nio.charset.StandardCharsets.UTF_8);
        event.eventTimeTrusted = parsed.eventTimeMillis <= origin.timestampMillis + maxAheadMillis;
        return ParsedRecord.event(event);
    }

    /** A dead letter whose bytes and reason are masked; {@code masked} names what was found. */
    static DeadLetter deadLetter(String stage, String reason, byte[] key, byte[] value, KafkaOrigin origin,
                                 SensitiveDataMasker masker) {
        byte[] kept = masker.mask(value);
        DeadLetter d = DeadLetter.of(stage, masker.mask(reason).text(), key, kept, origin);
        if (kept != value) d.masked = masker.find(value);
        return d;
    }

    @Override
    public TypeInformation<ParsedRecord> getProducedType() {
        return TypeInformation.of(ParsedRecord.class);
    }
}
