package io.auditpipe.flink.document;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.auditpipe.flink.archive.ArchiveParquet;
import io.auditpipe.flink.records.IngestedEvent;
import io.auditpipe.flink.records.KafkaOrigin;
import io.auditpipe.parser.AuditEvent;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Date;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * schemas/audit-event.schema.json is the one definition of the event; the Java event, its document
 * (store, archive and chain) and the Parquet columns are checked against it field by field. The
 * serializer that carries the event between tasks is checked against the Java classes
 * (IngestedEventSerializerTest), and the CLI's test oracle against the schema (tests/unit).
 */
class EventSchemaTest {
    static final Path SCHEMA = Path.of("../../schemas/audit-event.schema.json");

    /** Java fields whose document name is not their snake_case name. */
    static final Map<String, String> RENAMED =
            Map.of("id", "_id", "eventTimeMillis", "event_time", "origin", "ingest");

    /** Document fields made from others: outcome from auth_outcome and status. */
    static final List<String> DERIVED = List.of("outcome");

    static Map<String, Document> properties() throws Exception {
        Document schema = Document.parse(Files.readString(SCHEMA));
        Map<String, Document> out = new LinkedHashMap<>();
        Document props = schema.get("properties", Document.class);
        for (String k : props.keySet()) out.put(k, props.get(k, Document.class));
        return out;
    }

    @Test
    void aFullEventsDocumentHasEverySchemaFieldInItsOrderAndType() throws Exception {
        Map<String, Document> schema = properties();
        Document d = EventDocument.of(fullEvent());
        assertEquals(
                new ArrayList<>(schema.keySet()),
                new ArrayList<>(d.keySet()),
                "the document's fields, in order, are the schema's");
        for (Map.Entry<String, Object> f : d.entrySet()) {
            assertEquals(schemaType(schema.get(f.getKey())), javaType(f.getValue()), f.getKey());
        }
    }

    @Test
    void theParquetColumnsAreTheSchemasFieldsInOrder() throws Exception {
        Map<String, Document> schema = properties();
        List<String> columns = new ArrayList<>();
        ArchiveParquet.SCHEMA.getFields().forEach(t -> columns.add(t.getName()));
        assertEquals(new ArrayList<>(schema.keySet()), columns);
        ArchiveParquet.SCHEMA
                .getFields()
                .forEach(
                        t -> {
                            String type = schemaType(schema.get(t.getName()));
                            String parquet =
                                    t.isPrimitive()
                                            ? t.asPrimitiveType().getPrimitiveTypeName().name()
                                            : "GROUP";
                            String logical =
                                    t.getLogicalTypeAnnotation() == null
                                            ? ""
                                            : t.getLogicalTypeAnnotation().toString();
                            boolean fits =
                                    switch (type) {
                                        case "string" ->
                                                parquet.equals("BINARY")
                                                        && logical.startsWith("STRING");
                                        case "integer" ->
                                                parquet.equals("INT32") || parquet.equals("INT64");
                                        case "boolean" -> parquet.equals("BOOLEAN");
                                        case "date-time" ->
                                                parquet.equals("INT64")
                                                        && logical.startsWith("TIMESTAMP");
                                        case "array" ->
                                                parquet.equals("GROUP")
                                                        && logical.startsWith("LIST");
                                        case "object" ->
                                                parquet.equals("GROUP")
                                                        || logical.startsWith(
                                                                // extra: its canonical JSON
                                                                "STRING");
                                        default -> false;
                                    };
                            assertTrue(fits, t.getName() + ": schema " + type + ", Parquet " + t);
                        });
    }

    @Test
    void everyFieldOfTheJavaEventIsInTheSchemaAndEverySchemaFieldComesFromOne() throws Exception {
        TreeSet<String> fromJava = new TreeSet<>(DERIVED);
        for (Class<?> c : List.of(AuditEvent.class, IngestedEvent.class)) {
            for (Field f : c.getDeclaredFields()) {
                if (Modifier.isStatic(f.getModifiers()) || Modifier.isTransient(f.getModifiers()))
                    continue;
                if (f.getType() == AuditEvent.class)
                    continue; // IngestedEvent.event: the fields above
                fromJava.add(RENAMED.getOrDefault(f.getName(), snake(f.getName())));
            }
        }
        assertEquals(new TreeSet<>(properties().keySet()), fromJava);
    }

    @Test
    void theEnrichmentAndChainFieldsAreSchemaFields() throws Exception {
        Map<String, Document> schema = properties();
        for (String f : EventDocument.ENRICHMENT_FIELDS) assertTrue(schema.containsKey(f), f);
        for (String f : EventDocument.CHAIN_FIELDS) assertTrue(schema.containsKey(f), f);
        assertTrue(schema.containsKey(EventDocument.LINE_DIGEST_FIELD));
    }

    /**
     * An event with every field set (linked in an imported chain, with an untrusted time: its
     * optional fields present).
     */
    static IngestedEvent fullEvent() throws Exception {
        AuditEvent e = new AuditEvent();
        for (Field f : AuditEvent.class.getDeclaredFields()) {
            if (Modifier.isStatic(f.getModifiers())) continue;
            Class<?> t = f.getType();
            Object v =
                    t == String.class
                            ? "x"
                            : t == long.class || t == Long.class
                                    ? 1L
                                    : t == Integer.class
                                            ? 1
                                            : t == Boolean.class
                                                    ? Boolean.TRUE
                                                    : t == List.class
                                                            ? List.of("x")
                                                            : t == Map.class
                                                                    ? new LinkedHashMap<>(
                                                                            Map.of("k", "v"))
                                                                    : null;
            if (v == null) fail("the test cannot fill AuditEvent." + f.getName() + " of type " + t);
            f.set(e, v);
        }
        e.authOutcome = AuditEvent.AUTH_SUCCESS;
        IngestedEvent ie = new IngestedEvent(e, new KafkaOrigin("audit.raw", 0, 1, 2), "digest");
        ie.original = "line";
        ie.eventTimeTrusted = false;
        ie.chain = "import-x";
        ie.chainSeq = 1;
        ie.chainDigest = "link";
        ie.chainMac = "mac";
        return ie;
    }

    /**
     * string, integer, boolean, date-time, array or object, from a property's type, format, enum or
     * const.
     */
    static String schemaType(Document p) {
        if ("date-time".equals(p.getString("format"))) return "date-time";
        if (p.containsKey("type")) return p.getString("type");
        Object sample = p.containsKey("const") ? p.get("const") : ((List<?>) p.get("enum")).get(0);
        return javaType(sample);
    }

    static String javaType(Object v) {
        if (v instanceof String) return "string";
        if (v instanceof Integer || v instanceof Long) return "integer";
        if (v instanceof Boolean) return "boolean";
        if (v instanceof Date) return "date-time";
        if (v instanceof List) return "array";
        if (v instanceof Map) return "object";
        throw new AssertionError("no schema type for " + v.getClass());
    }

    static String snake(String camel) {
        return camel.replaceAll("([a-z0-9])([A-Z])", "$1_$2").toLowerCase(java.util.Locale.ROOT);
    }
}
