package io.auditpipe.flink;

import static io.auditpipe.flink.Fixtures.ORIGIN;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.WriteModel;
import io.auditpipe.flink.document.EventDocument;
import io.auditpipe.flink.functions.AuditRecordDeserializer;
import io.auditpipe.flink.records.DeadLetter;
import io.auditpipe.flink.records.IngestedEvent;
import io.auditpipe.flink.records.StatsKey;
import io.auditpipe.flink.records.StatsRow;
import io.auditpipe.flink.sink.DeadLetterKafkaSerializer;
import io.auditpipe.flink.sink.StoreDocuments;
import io.auditpipe.parser.Digests;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Base64;
import java.util.Date;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.bson.Document;
import org.junit.jupiter.api.Test;

class StoreDocumentsTest {
    @Test
    void eventDocumentUsesTheSchemaFieldNames() {
        IngestedEvent e =
                AuditRecordDeserializer.parse(
                                Fixtures.key("db-01"), Fixtures.connect(7, "app", 1045, 30), ORIGIN)
                        .event;
        Document d = EventDocument.of(e);
        assertEquals("db-01/7_2026-11-22T09:00:00", d.get("_id"));
        assertEquals(new Date(Fixtures.T0.plusSeconds(30).toEpochMilli()), d.get("event_time"));
        assertEquals("Connect", d.get("event_name"));
        assertEquals(1045, d.get("status"));
        assertEquals(7L, d.get("connection_id"));
        assertEquals("failure", d.get("auth_outcome"));
        assertEquals(
                "failure",
                d.get("outcome"),
                "PCI DSS 10.2.2: success or failure on every event that says");
        assertEquals(
                new String(
                        Fixtures.connect(7, "app", 1045, 30),
                        java.nio.charset.StandardCharsets.UTF_8),
                d.get("original"),
                "the record as the server wrote it");
        assertEquals("percona-json", d.get("format"));
        Document ingest = (Document) d.get("ingest");
        assertEquals(3, ingest.get("partition"));
        assertEquals(42L, ingest.get("offset"));
        assertFalse(d.containsKey("sqltext"), "absent fields stay absent");
    }

    /**
     * What an upsert of a count writes: its {@code $set} fields and the count it raises ({@code
     * $max}).
     */
    static Document written(WriteModel<Document> model) {
        Document update = (Document) ((UpdateOneModel<Document>) model).getUpdate();
        Document out = new Document((Document) update.get("$set"));
        out.putAll((Document) update.get("$max"));
        return out;
    }

    @Test
    void statsAreUpsertsOfTheFullCountThatNeverLowerIt() {
        StatsKey k = new StatsKey();
        k.server = "db-01";
        k.user = "app";
        k.eventName = "Query";
        k.commandClass = "select";
        k.status = 0;
        UpdateOneModel<Document> m =
                (UpdateOneModel<Document>)
                        StoreDocuments.statsUpsert(new StatsRow(k, 60_000L, 17, null));
        assertEquals(new Document("_id", "60000|db-01|app|Query|select|0"), m.getFilter());
        Document update = (Document) m.getUpdate();
        assertEquals(
                new Document("count", 17L),
                update.get("$max"),
                "a late write of an older count cannot take it back");
        assertFalse(((Document) update.get("$set")).containsKey("count"));
        assertEquals("db-01", written(m).get("server"));
        assertTrue(m.getOptions().isUpsert());
    }

    @Test
    void importedCountsAreInsertsOfTheSameFieldsUnderTheirChain() {
        io.auditpipe.flink.records.HourRow hour =
                new io.auditpipe.flink.records.HourRow("db-01", 3_600_000L, 17, "import-x");
        Document inserted =
                ((com.mongodb.client.model.InsertOneModel<Document>)
                                StoreDocuments.hour(hour, true))
                        .getDocument();
        UpdateOneModel<Document> upsert =
                (UpdateOneModel<Document>) StoreDocuments.hour(hour, false);
        assertEquals("3600000|db-01|import-x", inserted.get("_id"));
        assertEquals(((Document) upsert.getFilter()).get("_id"), inserted.get("_id"));
        Document set = written(upsert);
        inserted.remove("_id");
        inserted.remove("updated_at");
        set.remove("updated_at");
        assertEquals(set, inserted);
        assertEquals(
                new Document("window_start", new java.util.Date(3_600_000L))
                        .append("server", "db-01")
                        .append("count", 17L)
                        .append("chain", "import-x"),
                inserted);
        assertEquals(
                "3600000|db-01",
                new io.auditpipe.flink.records.HourRow("db-01", 3_600_000L, 17, null).id());

        io.auditpipe.flink.records.RollupKey rk = new io.auditpipe.flink.records.RollupKey();
        rk.server = "db-01";
        rk.user = "app";
        rk.controls = "PCI-DSS-10.2.1.4";
        io.auditpipe.flink.records.RollupRow day =
                new io.auditpipe.flink.records.RollupRow(rk, 0L, 3, "import-x");
        Document rolled =
                ((com.mongodb.client.model.InsertOneModel<Document>)
                                StoreDocuments.rollup(day, true))
                        .getDocument();
        Document rolledSet = written(StoreDocuments.rollup(day, false));
        assertEquals(day.id(), rolled.get("_id"));
        assertTrue(day.id().endsWith("|import-x"));
        rolled.remove("_id");
        rolled.remove("updated_at");
        rolledSet.remove("updated_at");
        assertEquals(rolledSet, rolled);
    }

    @Test
    void deadLetterKeepsTheExactBytes() {
        byte[] bad = new byte[] {'{', (byte) 0xfe, '}'};
        DeadLetter dl =
                AuditRecordDeserializer.parse(Fixtures.key("db-01"), bad, ORIGIN).deadLetter;
        Document d = StoreDocuments.deadLetter(dl, 1 << 20);
        Document original = (Document) d.get("original");
        assertEquals(Base64.getEncoder().encodeToString(bad), original.get("base64"));
        assertEquals(false, original.get("valid_utf8"));
        assertEquals(3, original.get("length"));
        assertEquals(Digests.sha256Hex(bad), original.get("sha256"));
        assertFalse(original.containsKey("truncated"));
        assertEquals("parse", d.get("stage"));
        assertTrue(
                new String(StoreDocuments.deadLetterJson(dl, 1 << 20), StandardCharsets.UTF_8)
                        .contains("\"reason\": \"invalid UTF-8 at byte 1\""));
    }

    /**
     * A 600 KiB unparsable line once stopped the pipeline: its dead letter exceeded the producer's
     * 1 MiB limit.
     */
    @Test
    void aLongLineIsKeptWholeWhenTheLimitAllowsIt() {
        byte[] line = longLine(600 * 1024);
        DeadLetter dl =
                AuditRecordDeserializer.parse(Fixtures.key("db-01"), line, ORIGIN).deadLetter;
        Document original = (Document) StoreDocuments.deadLetter(dl, 1 << 20).get("original");
        assertArrayEquals(
                line,
                Base64.getDecoder().decode((String) original.get("base64")),
                "whole, exactly");
        assertEquals(
                StoreDocuments.TEXT_EXCERPT_BYTES,
                ((String) original.get("text")).length(),
                "reading copy only");
        assertEquals(true, original.get("text_truncated"));
        assertFalse(original.containsKey("truncated"));
    }

    @Test
    void aDeadLetterNeverExceedsItsLimitAndSaysWhatItCut() {
        byte[] line = longLine(3 * 1024 * 1024);
        DeadLetter dl =
                AuditRecordDeserializer.parse(Fixtures.key("db-01"), line, ORIGIN).deadLetter;
        for (int limit : new int[] {1 << 20, 2 << 20, 65536}) {
            byte[] json = StoreDocuments.deadLetterJson(dl, limit);
            assertTrue(json.length <= limit, json.length + " bytes for a limit of " + limit);
            Document original = (Document) StoreDocuments.deadLetter(dl, limit).get("original");
            byte[] kept = Base64.getDecoder().decode((String) original.get("base64"));
            assertEquals(true, original.get("truncated"));
            assertEquals(kept.length, original.get("kept_bytes"));
            assertTrue(
                    kept.length > limit / 2 || limit == 65536,
                    "keeps as much as fits: " + kept.length);
            assertArrayEquals(
                    Arrays.copyOf(line, kept.length), kept, "a prefix of the line, exactly");
            assertEquals(line.length, original.get("length"));
            assertEquals(
                    Digests.sha256Hex(line),
                    original.get("sha256"),
                    "the whole line's digest, to find it");
        }
    }

    @Test
    void theTopicRecordFitsTheProducerLimit() {
        byte[] line = longLine(3 * 1024 * 1024);
        DeadLetter dl =
                AuditRecordDeserializer.parse(Fixtures.key("db-01"), line, ORIGIN).deadLetter;
        ProducerRecord<byte[], byte[]> r =
                new DeadLetterKafkaSerializer("audit.deadletter", 1 << 20).serialize(dl, null, 1L);
        assertTrue(
                r.value().length + r.key().length <= (1 << 20) - 1024,
                String.valueOf(r.value().length));
    }

    /** Not JSON, so a dead letter: the shape of a huge statement cut by a broken writer. */
    private static byte[] longLine(int length) {
        byte[] b = new byte[length];
        Arrays.fill(b, (byte) 'x');
        b[0] = '{';
        return b;
    }

    @Test
    void aChainHeadUpdatesItsServersEntryWithoutGoingBackInTime() {
        io.auditpipe.flink.chain.ChainHead h =
                new io.auditpipe.flink.chain.ChainHead(
                        "db-1", 42, "abc", "db-1:7", 1_700_000_000_000L, 1_700_000_060_000L);
        UpdateOneModel<Document> m = (UpdateOneModel<Document>) StoreDocuments.serverUpsert(h);
        assertEquals(new Document("_id", "db-1"), m.getFilter());
        assertTrue(m.getOptions().isUpsert());
        Document update = (Document) m.getUpdate();
        // the Grafana variable query reads "value"; the dashboards filter on "server"
        assertEquals(new Document("value", "db-1").append("server", "db-1"), update.get("$set"));
        Document max = (Document) update.get("$max");
        assertEquals(new Date(1_700_000_000_000L), max.get("last_event_time"));
        assertEquals(42L, max.get("last_seq"));
    }
}
