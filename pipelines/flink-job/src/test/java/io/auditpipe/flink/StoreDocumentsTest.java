package io.auditpipe.flink;

import io.auditpipe.flink.functions.AuditRecordDeserializer;
import io.auditpipe.flink.records.DeadLetter;
import io.auditpipe.flink.records.IngestedEvent;
import io.auditpipe.flink.records.StatsKey;
import io.auditpipe.flink.records.StatsRow;
import io.auditpipe.flink.sink.StoreDocuments;

import com.mongodb.client.model.UpdateOneModel;
import org.bson.Document;
import org.junit.jupiter.api.Test;

import java.util.Base64;
import java.util.Date;

import static io.auditpipe.flink.Fixtures.ORIGIN;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class StoreDocumentsTest {
    @Test
    void eventDocumentUsesTheSchemaFieldNames() {
        IngestedEvent e = AuditRecordDeserializer.parse(Fixtures.key("db-01"), Fixtures.connect(7, "app", 1045, 30), ORIGIN).event;
        Document d = StoreDocuments.event(e);
        assertEquals("db-01/7_2026-11-22T09:00:00", d.get("_id"));
        assertEquals(new Date(Fixtures.T0.plusSeconds(30).toEpochMilli()), d.get("event_time"));
        assertEquals("Connect", d.get("event_name"));
        assertEquals(1045, d.get("status"));
        assertEquals(7L, d.get("connection_id"));
        assertEquals("failure", d.get("auth_outcome"));
        assertEquals("percona-json", d.get("format"));
        Document ingest = (Document) d.get("ingest");
        assertEquals(3, ingest.get("partition"));
        assertEquals(42L, ingest.get("offset"));
        assertFalse(d.containsKey("sqltext"), "absent fields stay absent");
    }

    @Test
    void statsAreUpsertsOfTheFullCount() {
        StatsKey k = new StatsKey();
        k.server = "db-01"; k.user = "app"; k.eventName = "Query"; k.commandClass = "select"; k.status = 0;
        UpdateOneModel<Document> m = (UpdateOneModel<Document>) StoreDocuments.statsUpsert(new StatsRow(k, 60_000L, 17));
        assertEquals(new Document("_id", "60000|db-01|app|Query|select|0"), m.getFilter());
        Document set = (Document) ((Document) m.getUpdate()).get("$set");
        assertEquals(17L, set.get("count"));
        assertTrue(m.getOptions().isUpsert());
    }

    @Test
    void deadLetterKeepsTheExactBytes() {
        byte[] bad = new byte[] {'{', (byte) 0xfe, '}'};
        DeadLetter dl = AuditRecordDeserializer.parse(Fixtures.key("db-01"), bad, ORIGIN).deadLetter;
        Document d = StoreDocuments.deadLetter(dl);
        Document original = (Document) d.get("original");
        assertEquals(Base64.getEncoder().encodeToString(bad), original.get("base64"));
        assertEquals(false, original.get("valid_utf8"));
        assertEquals(3, original.get("length"));
        assertEquals("parse", d.get("stage"));
        assertTrue(new String(StoreDocuments.deadLetterJson(dl), java.nio.charset.StandardCharsets.UTF_8)
                .contains("\"reason\": \"invalid UTF-8 at byte 1\""));
    }
}
