package io.auditpipe.flink.functions;

import io.auditpipe.enrich.ComplianceSettings;
import io.auditpipe.enrich.Enricher;
import io.auditpipe.flink.records.DeadLetter;
import io.auditpipe.flink.records.IngestedEvent;
import io.auditpipe.flink.records.KafkaOrigin;
import io.auditpipe.flink.records.ParsedRecord;
import io.auditpipe.parser.ParseResult;
import io.auditpipe.reader.RecordReader;
import java.time.Duration;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.connector.kafka.source.reader.deserializer.KafkaRecordDeserializationSchema;
import org.apache.flink.util.Collector;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/**
 * Turns each message of audit.raw into a {@link ParsedRecord}: the event {@link RecordReader} read
 * from it (parsed, enriched, masked) with where it was read from, or a dead letter with the reason.
 * Records are read here, in the source, so that the watermark is generated per Kafka partition from
 * the records' own timestamps (a backlog in one partition does not make another partition's events
 * late), and so that nothing after the source (store, topics, alerts, dead letters) ever sees an
 * unmasked card number. Never throws: a throw here would fail the job on bad input.
 */
public class AuditRecordDeserializer implements KafkaRecordDeserializationSchema<ParsedRecord> {
    private static final long serialVersionUID = 1L;

    /** Default of job option event-time.max-ahead. */
    public static final Duration DEFAULT_MAX_AHEAD = Duration.ofMinutes(5);

    private final long maxAheadMillis;
    private final ComplianceSettings compliance;

    /** False for the alert rules' source: events without their stored original and its digest. */
    private final boolean withOriginal;

    private transient RecordReader reader;

    public AuditRecordDeserializer() {
        this(DEFAULT_MAX_AHEAD, ComplianceSettings.defaults());
    }

    public AuditRecordDeserializer(Duration maxAhead, ComplianceSettings compliance) {
        this(maxAhead, compliance, true);
    }

    private AuditRecordDeserializer(
            Duration maxAhead, ComplianceSettings compliance, boolean withOriginal) {
        this.maxAheadMillis = maxAhead.toMillis();
        this.compliance = compliance;
        this.withOriginal = withOriginal;
    }

    /**
     * For the alert rules' source (AuditPipeline): the same events, parsed, enriched and masked
     * alike, without what only the store and the archive keep: the masked original record and its
     * {@code line_sha256} (a second pass of the masker over the whole line and a SHA-256 per
     * record).
     */
    public static AuditRecordDeserializer forAlerts(
            Duration maxAhead, ComplianceSettings compliance) {
        return new AuditRecordDeserializer(maxAhead, compliance, false);
    }

    /** Messages that were only a file's framing (see {@link ParseResult#framing}); a job metric. */
    private transient org.apache.flink.metrics.Counter framingMessages;

    @Override
    public void open(
            org.apache.flink.api.common.serialization.DeserializationSchema.InitializationContext
                    context) {
        framingMessages = context.getMetricGroup().counter("framingMessages");
        reader = new RecordReader(new Enricher(compliance), withOriginal);
    }

    @Override
    public void deserialize(ConsumerRecord<byte[], byte[]> message, Collector<ParsedRecord> out) {
        ParsedRecord r =
                toRecord(
                        reader().read(message.key(), message.value(), message.timestamp()),
                        message.key(),
                        message.value(),
                        new KafkaOrigin(
                                message.topic(),
                                message.partition(),
                                message.offset(),
                                message.timestamp()),
                        maxAheadMillis);
        if (r != null) {
            out.collect(r);
        } else if (framingMessages != null) {
            framingMessages.inc();
        }
    }

    private RecordReader reader() {
        if (reader == null) reader = new RecordReader(new Enricher(compliance), withOriginal);
        return reader;
    }

    /**
     * One enricher with the default settings per thread, for the overloads that take none (tests).
     */
    private static final ThreadLocal<Enricher> DEFAULT_ENRICHER =
            ThreadLocal.withInitial(() -> new Enricher(ComplianceSettings.defaults()));

    /**
     * {@link #parse(byte[], byte[], KafkaOrigin, long, Enricher)} with the default bound and
     * compliance settings.
     */
    public static ParsedRecord parse(byte[] key, byte[] value, KafkaOrigin origin) {
        return parse(key, value, origin, DEFAULT_MAX_AHEAD.toMillis(), DEFAULT_ENRICHER.get());
    }

    /** With the default compliance settings (nothing classified, card numbers masked). */
    public static ParsedRecord parse(
            byte[] key, byte[] value, KafkaOrigin origin, long maxAheadMillis) {
        return parse(key, value, origin, maxAheadMillis, DEFAULT_ENRICHER.get());
    }

    /**
     * The whole decision for one message; public for tests and the offline parser. Null when the
     * message is only the file's framing, no record ({@link ParseResult#framing}).
     *
     * <p>Event time is the record's own timestamp, trusted only up to {@code maxAheadMillis} ahead
     * of the Kafka record's timestamp (the time the collector shipped it): a server clock far
     * ahead, or a forged or corrupted timestamp, would otherwise move its partition's watermark and
     * make every older event on that partition too late for its minute. An event beyond the bound
     * is kept with its timestamp as written, flagged {@code event_time_trusted: false}, counted in
     * the minute it was shipped and ignored by the watermarks. The bound compares two recorded
     * times, never the clock of the moment, so a replay decides the same way. Masking: {@link
     * RecordReader}.
     */
    public static ParsedRecord parse(
            byte[] key, byte[] value, KafkaOrigin origin, long maxAheadMillis, Enricher enricher) {
        return parse(key, value, origin, maxAheadMillis, enricher, true);
    }

    /**
     * {@code withOriginal} false: the event without {@code original} and {@code line_sha256}
     * ({@link #forAlerts}).
     */
    static ParsedRecord parse(
            byte[] key,
            byte[] value,
            KafkaOrigin origin,
            long maxAheadMillis,
            Enricher enricher,
            boolean withOriginal) {
        return toRecord(
                new RecordReader(enricher, withOriginal).read(key, value, origin.timestampMillis),
                key,
                value,
                origin,
                maxAheadMillis);
    }

    /**
     * What the reader made of a message, with where it was read from: null for the file's framing.
     */
    public static ParsedRecord toRecord(
            RecordReader.Read read,
            byte[] key,
            byte[] value,
            KafkaOrigin origin,
            long maxAheadMillis) {
        if (read.isFraming()) {
            return null;
        }
        if (read.failure() != null) {
            return ParsedRecord.deadLetter(deadLetter(read.failure(), key, origin));
        }
        IngestedEvent event = new IngestedEvent(read.event(), origin, read.lineSha256());
        event.original = read.original();
        event.eventTimeTrusted =
                read.event().eventTimeMillis <= origin.timestampMillis + maxAheadMillis;
        return ParsedRecord.event(event);
    }

    private static DeadLetter deadLetter(RecordReader.Failure f, byte[] key, KafkaOrigin origin) {
        DeadLetter d = DeadLetter.of(f.stage(), f.reason(), key, f.value(), origin);
        d.masked = f.masked();
        if (f.source() != null) {
            d.server = f.source().server();
            d.format = f.source().format();
            d.sourceFile = f.source().source();
        }
        return d;
    }

    @Override
    public TypeInformation<ParsedRecord> getProducedType() {
        return TypeInformation.of(ParsedRecord.class);
    }
}
