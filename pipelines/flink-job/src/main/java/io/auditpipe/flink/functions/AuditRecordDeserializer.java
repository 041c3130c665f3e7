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

/**
 * Turns each message of audit.raw into a {@link ParsedRecord}: the parsed event, or a dead letter
 * with the reason. Parsing happens here, in the source, so that the watermark is generated per
 * Kafka partition from the records' own timestamps (a backlog in one partition does not make
 * another partition's events late). Never throws: a throw here would fail the job on bad input.
 */
public class AuditRecordDeserializer implements KafkaRecordDeserializationSchema<ParsedRecord> {
    private static final long serialVersionUID = 1L;

    @Override
    public void deserialize(ConsumerRecord<byte[], byte[]> message, Collector<ParsedRecord> out) {
        out.collect(parse(message.key(), message.value(),
                new KafkaOrigin(message.topic(), message.partition(), message.offset(), message.timestamp())));
    }

    /** The whole decision for one message; public for tests and the offline parser. */
    public static ParsedRecord parse(byte[] key, byte[] value, KafkaOrigin origin) {
        SourceDescriptor source;
        try {
            source = SourceDescriptor.parseKey(key);
        } catch (SourceDescriptor.InvalidSourceKeyException e) {
            return ParsedRecord.deadLetter(DeadLetter.of(DeadLetter.STAGE_PARSE, e.getMessage(), key, value, origin));
        }
        ParseResult result;
        try {
            result = AuditFormats.parse(value == null ? new byte[0] : value, source);
        } catch (RuntimeException e) {
            result = ParseResult.failed("parser error: " + e);
        }
        if (!result.isOk()) {
            DeadLetter d = DeadLetter.of(DeadLetter.STAGE_PARSE, result.failureReason(), key, value, origin);
            d.server = source.server();
            d.format = source.format();
            d.sourceFile = source.source();
            return ParsedRecord.deadLetter(d);
        }
        return ParsedRecord.event(new IngestedEvent(result.event(), origin, Digests.sha256Hex(value)));
    }

    @Override
    public TypeInformation<ParsedRecord> getProducedType() {
        return TypeInformation.of(ParsedRecord.class);
    }
}
