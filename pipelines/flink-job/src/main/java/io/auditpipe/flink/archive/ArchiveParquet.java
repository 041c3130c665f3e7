package io.auditpipe.flink.archive;

import io.auditpipe.flink.chain.EventChain;
import io.auditpipe.flink.document.CanonicalForm;
import io.auditpipe.flink.document.EventDocument;
import io.auditpipe.flink.records.IngestedEvent;
import io.auditpipe.flink.sink.StoreDocuments;
import java.util.ArrayList;
import java.util.Date;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.formats.parquet.ParquetWriterFactory;
import org.apache.hadoop.conf.Configuration;
import org.apache.parquet.conf.ParquetConfiguration;
import org.apache.parquet.hadoop.ParquetWriter;
import org.apache.parquet.hadoop.api.WriteSupport;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.apache.parquet.io.OutputFile;
import org.apache.parquet.io.api.Binary;
import org.apache.parquet.io.api.RecordConsumer;
import org.apache.parquet.schema.LogicalTypeAnnotation;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName;
import org.apache.parquet.schema.Type;
import org.apache.parquet.schema.Types;
import org.bson.Document;

/**
 * Archived events as Parquet (docs/archive.md): one row per stored event, one column per field of
 * the event document (schemas/audit-event.schema.json), with the same names, so that the saved
 * queries run over the archive (cli/auditpipe/archive/) and {@code auditpipe verify} recomputes
 * each row's chain link from exactly what the store holds. The row is made from the document the
 * store gets ({@link StoreDocuments#event}), so the two cannot differ. {@code extra} is its
 * canonical JSON text ({@link EventChain#canonical}); {@code ingest} a group of its four fields.
 */
public final class ArchiveParquet {
    private ArchiveParquet() {}

    enum Kind {
        STRING,
        TIMESTAMP,
        INT64,
        INT32,
        BOOLEAN,
        STRING_LIST,
        JSON_OBJECT,
        INGEST
    }

    /** The columns, in file order: the event document's fields. */
    static final List<Map.Entry<String, Kind>> COLUMNS =
            List.of(
                    Map.entry("_id", Kind.STRING),
                    Map.entry("server", Kind.STRING),
                    Map.entry("format", Kind.STRING),
                    Map.entry("source_file", Kind.STRING),
                    Map.entry("collector", Kind.STRING),
                    Map.entry("record_id", Kind.STRING),
                    Map.entry("event_time", Kind.TIMESTAMP),
                    Map.entry("event_name", Kind.STRING),
                    Map.entry("command_class", Kind.STRING),
                    Map.entry("connection_id", Kind.INT64),
                    Map.entry("status", Kind.INT32),
                    Map.entry("sqltext", Kind.STRING),
                    Map.entry("user", Kind.STRING),
                    Map.entry("user_raw", Kind.STRING),
                    Map.entry("priv_user", Kind.STRING),
                    Map.entry("os_user", Kind.STRING),
                    Map.entry("os_login", Kind.STRING),
                    Map.entry("proxy_user", Kind.STRING),
                    Map.entry("host", Kind.STRING),
                    Map.entry("ip", Kind.STRING),
                    Map.entry("db", Kind.STRING),
                    Map.entry("auth_outcome", Kind.STRING),
                    Map.entry("outcome", Kind.STRING),
                    Map.entry("extra", Kind.JSON_OBJECT),
                    Map.entry("category", Kind.STRING),
                    Map.entry("action", Kind.STRING),
                    Map.entry("tables", Kind.STRING_LIST),
                    Map.entry("tables_error", Kind.STRING),
                    Map.entry("data_classes", Kind.STRING_LIST),
                    Map.entry("principal_class", Kind.STRING),
                    Map.entry("access_violations", Kind.STRING_LIST),
                    Map.entry("in_change_window", Kind.BOOLEAN),
                    Map.entry("after_hours", Kind.BOOLEAN),
                    Map.entry("controls", Kind.STRING_LIST),
                    Map.entry("masked", Kind.STRING_LIST),
                    Map.entry("line_sha256", Kind.STRING),
                    Map.entry("original", Kind.STRING),
                    Map.entry("event_time_trusted", Kind.BOOLEAN),
                    Map.entry("ingest", Kind.INGEST),
                    Map.entry(EventDocument.CHAIN_FIELD, Kind.STRING),
                    Map.entry(EventDocument.SEQ_FIELD, Kind.INT64),
                    Map.entry(EventDocument.DIGEST_FIELD, Kind.STRING),
                    Map.entry(EventDocument.MAC_FIELD, Kind.STRING));

    public static final MessageType SCHEMA = schema();

    private static MessageType schema() {
        List<Type> fields = new ArrayList<>();
        for (Map.Entry<String, Kind> c : COLUMNS) {
            String name = c.getKey();
            fields.add(
                    switch (c.getValue()) {
                        case STRING, JSON_OBJECT ->
                                Types.optional(PrimitiveTypeName.BINARY)
                                        .as(LogicalTypeAnnotation.stringType())
                                        .named(name);
                        case TIMESTAMP -> timestamp(name);
                        case INT64 -> Types.optional(PrimitiveTypeName.INT64).named(name);
                        case INT32 -> Types.optional(PrimitiveTypeName.INT32).named(name);
                        case BOOLEAN -> Types.optional(PrimitiveTypeName.BOOLEAN).named(name);
                        case STRING_LIST ->
                                Types.optionalList()
                                        .optionalElement(PrimitiveTypeName.BINARY)
                                        .as(LogicalTypeAnnotation.stringType())
                                        .named(name);
                        case INGEST ->
                                Types.optionalGroup()
                                        .addField(
                                                Types.optional(PrimitiveTypeName.BINARY)
                                                        .as(LogicalTypeAnnotation.stringType())
                                                        .named("topic"))
                                        .addField(
                                                Types.optional(PrimitiveTypeName.INT32)
                                                        .named("partition"))
                                        .addField(
                                                Types.optional(PrimitiveTypeName.INT64)
                                                        .named("offset"))
                                        .addField(timestamp("timestamp"))
                                        .named(name);
                    });
        }
        return new MessageType("audit_event", fields);
    }

    private static Type timestamp(String name) {
        return Types.optional(PrimitiveTypeName.INT64)
                .as(
                        LogicalTypeAnnotation.timestampType(
                                true, LogicalTypeAnnotation.TimeUnit.MILLIS))
                .named(name);
    }

    /**
     * Columns whose values are (nearly) all different: no dictionary encoding. Parquet tries a
     * dictionary per column until the page's dictionary is too large, and for these it never pays:
     * its hash lookups (Binary.hashCode/equals) were a quarter of the chain subtask's time in a
     * profile of a 200,000-record run (2026-11-24). Snappy still compresses them.
     */
    static final List<String> WITHOUT_DICTIONARY =
            List.of(
                    "_id",
                    "record_id",
                    "event_time",
                    "sqltext",
                    "extra",
                    "line_sha256",
                    "original",
                    "ingest.offset",
                    "ingest.timestamp",
                    EventDocument.SEQ_FIELD,
                    EventDocument.DIGEST_FIELD,
                    EventDocument.MAC_FIELD);

    /**
     * Columns no reader filters on, whose minimum and maximum (kept per row group and page for each
     * column unless turned off) help nothing: comparing values with the page's bounds was 8.5% of
     * the archive writer's samples in a profile of an 800,000-event import, 4.4% with these
     * columns' turned off (2026-11-26). The time, server, chain and sequence columns keep theirs:
     * DuckDB skips row groups by them.
     */
    static final List<String> WITHOUT_STATISTICS =
            List.of(
                    "_id",
                    "record_id",
                    "sqltext",
                    "extra",
                    "line_sha256",
                    "original",
                    EventDocument.DIGEST_FIELD,
                    EventDocument.MAC_FIELD);

    /** The bulk-writer factory for Flink's FileSink. */
    public static ParquetWriterFactory<IngestedEvent> writerFactory() {
        return new ParquetWriterFactory<>(
                out -> {
                    Builder builder =
                            new Builder(out)
                                    .withCompressionCodec(CompressionCodecName.SNAPPY)
                                    .withSizeStatisticsEnabled(
                                            // sizes of the byte arrays per page: read by no reader
                                            // here
                                            false);
                    for (String column : WITHOUT_DICTIONARY) {
                        builder = builder.withDictionaryEncoding(column, false);
                    }
                    for (String column : WITHOUT_STATISTICS) {
                        builder = builder.withStatisticsEnabled(column, false);
                    }
                    return builder.build();
                });
    }

    private static final class Builder extends ParquetWriter.Builder<IngestedEvent, Builder> {
        Builder(OutputFile out) {
            super(out);
        }

        @Override
        protected Builder self() {
            return this;
        }

        @Override
        protected WriteSupport<IngestedEvent> getWriteSupport(Configuration conf) {
            return new EventWriteSupport();
        }

        @Override
        protected WriteSupport<IngestedEvent> getWriteSupport(ParquetConfiguration conf) {
            return new EventWriteSupport();
        }
    }

    static final class EventWriteSupport extends WriteSupport<IngestedEvent> {
        private RecordConsumer out;

        @Override
        public WriteContext init(Configuration configuration) {
            return context();
        }

        @Override
        public WriteContext init(ParquetConfiguration configuration) {
            return context();
        }

        private static WriteContext context() {
            Map<String, String> meta = new HashMap<>();
            meta.put("auditpipe.archive", "events v1 (docs/archive.md)");
            return new WriteContext(SCHEMA, meta);
        }

        @Override
        public void prepareForWrite(RecordConsumer recordConsumer) {
            this.out = recordConsumer;
        }

        @Override
        public void write(IngestedEvent e) {
            writeDocument(e.document != null ? e.document : EventDocument.of(e), out);
        }
    }

    static void writeDocument(Document d, RecordConsumer out) {
        out.startMessage();
        for (int i = 0; i < COLUMNS.size(); i++) {
            String name = COLUMNS.get(i).getKey();
            Object v = d.get(name);
            if (v == null) continue;
            out.startField(name, i);
            switch (COLUMNS.get(i).getValue()) {
                case STRING -> out.addBinary(Binary.fromString((String) v));
                case JSON_OBJECT ->
                        out.addBinary(Binary.fromString(CanonicalForm.of(toDocument(v))));
                case TIMESTAMP -> out.addLong(((Date) v).getTime());
                case INT64 -> out.addLong(((Number) v).longValue());
                case INT32 -> out.addInteger(((Number) v).intValue());
                case BOOLEAN -> out.addBoolean((Boolean) v);
                case STRING_LIST -> {
                    out.startGroup();
                    List<?> items = (List<?>) v;
                    if (!items.isEmpty()) {
                        out.startField("list", 0);
                        for (Object item : items) {
                            out.startGroup();
                            if (item != null) {
                                out.startField("element", 0);
                                out.addBinary(Binary.fromString((String) item));
                                out.endField("element", 0);
                            }
                            out.endGroup();
                        }
                        out.endField("list", 0);
                    }
                    out.endGroup();
                }
                case INGEST -> {
                    Document g = toDocument(v);
                    out.startGroup();
                    if (g.get("topic") != null) {
                        out.startField("topic", 0);
                        out.addBinary(Binary.fromString(g.getString("topic")));
                        out.endField("topic", 0);
                    }
                    if (g.get("partition") != null) {
                        out.startField("partition", 1);
                        out.addInteger(((Number) g.get("partition")).intValue());
                        out.endField("partition", 1);
                    }
                    if (g.get("offset") != null) {
                        out.startField("offset", 2);
                        out.addLong(((Number) g.get("offset")).longValue());
                        out.endField("offset", 2);
                    }
                    if (g.get("timestamp") != null) {
                        out.startField("timestamp", 3);
                        out.addLong(((Date) g.get("timestamp")).getTime());
                        out.endField("timestamp", 3);
                    }
                    out.endGroup();
                }
            }
            out.endField(name, i);
        }
        out.endMessage();
    }

    private static Document toDocument(Object v) {
        if (v instanceof Document doc) return doc;
        Document doc = new Document();
        ((Map<?, ?>) v).forEach((k, val) -> doc.append((String) k, val));
        return doc;
    }
}
