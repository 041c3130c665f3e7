package io.auditpipe.flink.functions;

import io.auditpipe.flink.records.DeadLetter;
import io.auditpipe.flink.records.IngestedEvent;
import io.auditpipe.flink.records.KafkaOrigin;
import io.auditpipe.flink.records.ParsedRecord;
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
 * Turns each message of audit.raw into a {@link ParsedRecord}: the parsed event, or a dead letter
 * with the reason. Parsing happens here, in the source, so that the watermark is generated per
 * Kafka partition from the records' own timestamps (a backlog in one partition does not make
 * another partition's events late). Never throws: a throw here would fail the job on bad input.
 */
public class AuditRecordDeserializer implements KafkaRecordDeserializationSchema<ParsedRecord> {
    private static final long serialVersionUID = 1L;
    /** Default of job option event-time.max-ahead. */
    public static final Duration DEFAULT_MAX_AHEAD = Duration.ofMinutes(5);

    private final long maxAheadMillis;

    public AuditRecordDeserializer() {
        this(DEFAULT_MAX_AHEAD);
    }

    public AuditRecordDeserializer(Duration maxAhead) {
        this.maxAheadMillis = maxAhead.toMillis();
    }

    /** Messages that were only a file's framing (see {@link ParseResult#framing}); a job metric. */
    private transient org.apache.flink.metrics.Counter framingMessages;

    @Override
    public void open(org.apache.flink.api.common.serialization.DeserializationSchema.InitializationContext context) {
        framingMessages = context.getMetricGroup().counter("framingMessages");
    }

    @Override
    public void deserialize(ConsumerRecord<byte[], byte[]> message, Collector<ParsedRecord> out) {
        ParsedRecord r = parse(message.key(), message.value(),
                new KafkaOrigin(message.topic(), message.partition(), message.offset(), message.timestamp()),
                maxAheadMillis);
        if (r != null) {
            out.collect(r);
        } else if (framingMessages != null) {
            framingMessages.inc();
        }
    }

    /** {@link #parse(byte[], byte[], KafkaOrigin, long)} with the default bound on event time. */
    public static ParsedRecord parse(byte[] key, byte[] value, KafkaOrigin origin) {
        return parse(key, value, origin, DEFAULT_MAX_AHEAD.toMillis());
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
     */
    public static ParsedRecord parse(byte[] key, byte[] value, KafkaOrigin origin, long maxAheadMillis) {
        SourceDescriptor source;
        try {
            source = SourceDescriptor.parseKey(key);
        } catch (SourceDescriptor.InvalidSourceKeyException e) {
            return ParsedRecord.deadLetter(DeadLetter.of(DeadLetter.STAGE_PARSE, e.getMessage(), key, value, origin));
        }
        if (source.cut() != null) {
            byte[] shipped = value == null ? new byte[0] : value;
            DeadLetter d = DeadLetter.of(DeadLetter.STAGE_COLLECT, source.cut().describe(shipped.length), key, shipped, origin);
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
            DeadLetter d = DeadLetter.of(DeadLetter.STAGE_PARSE, result.failureReason(), key, value, origin);
            d.server = source.server();
            d.format = source.format();
            d.sourceFile = source.source();
            return ParsedRecord.deadLetter(d);
        }
        IngestedEvent event = new IngestedEvent(result.event(), origin, Digests.sha256Hex(value));
        event.original = new String(value, java.nio.charset.StandardCharsets.UTF_8);
        event.eventTimeTrusted = result.event().eventTimeMillis <= origin.timestampMillis + maxAheadMillis;
        return ParsedRecord.event(event);
    }

    @Override
    public TypeInformation<ParsedRecord> getProducedType() {
        return TypeInformation.of(ParsedRecord.class);
    }
}
