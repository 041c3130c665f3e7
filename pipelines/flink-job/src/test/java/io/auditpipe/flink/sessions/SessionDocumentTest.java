package io.auditpipe.flink.sessions;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.auditpipe.flink.sink.StoreDocuments;
import io.auditpipe.parser.AuditEvent;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * schemas/session.schema.json is the one definition of a session's document: StoreDocuments.session
 * is checked against it.
 */
class SessionDocumentTest {
    static final Path SCHEMA = Path.of("../../schemas/session.schema.json");

    static Session session(boolean withLogin, String end) {
        Session s = new Session();
        s.id = "db-01/5/1000";
        s.server = "db-01";
        s.connectionId = 5;
        s.user = "app";
        s.host = "app-7";
        s.ip = "10.0.0.7";
        s.osUser = "";
        s.db = "shop";
        if (withLogin) {
            s.loginMillis = 1000L;
            s.loginOutcome = AuditEvent.AUTH_SUCCESS;
            s.loginEventId = "db-01/1_x";
        }
        s.firstMillis = 1000;
        s.lastMillis = 9000;
        if (Session.END_LOGOUT.equals(end)) s.logoutMillis = 9000L;
        s.end = end;
        s.records = 3;
        s.categories = new TreeMap<>(Map.of("authentication", 2L, "data_read", 1L));
        s.tables = List.of("shop.cards");
        s.dataClasses = List.of("pci_cardholder");
        s.firstEventId = "db-01/1_x";
        s.lastEventId = "db-01/3_x";
        return s;
    }

    @Test
    void everyFieldIsTheSchemasInItsOrderAndTheRequiredOnesAreAlwaysThere() throws Exception {
        Document schema = Document.parse(Files.readString(SCHEMA));
        List<String> order = new ArrayList<>(schema.get("properties", Document.class).keySet());
        List<String> required = schema.getList("required", String.class);
        List<String> states =
                schema.get("properties", Document.class)
                        .get("state", Document.class)
                        .getList("enum", String.class);
        assertEquals(
                List.of(
                        "open",
                        Session.END_LOGOUT,
                        Session.END_FAILED_LOGIN,
                        Session.END_IDLE,
                        Session.END_SUPERSEDED),
                states,
                "the schema's states are the builder's ends, and open");
        for (Session s :
                List.of(
                        session(true, Session.END_LOGOUT),
                        session(false, null),
                        session(true, Session.END_IDLE))) {
            Document d = StoreDocuments.session(s);
            List<String> keys = new ArrayList<>(d.keySet());
            assertTrue(order.containsAll(keys), "fields the schema does not have: " + keys);
            assertEquals(
                    order.stream().filter(keys::contains).toList(), keys, "in the schema's order");
            assertTrue(keys.containsAll(required), "required: " + required + ", has " + keys);
            assertTrue(states.contains(d.getString("state")), d.getString("state"));
        }
        Document full = StoreDocuments.session(session(true, Session.END_LOGOUT));
        assertEquals(
                new ArrayList<>(order),
                new ArrayList<>(full.keySet()),
                "a session that logged in and out has every field");
        assertEquals(new Date(1000), full.get("start_time"));
        assertEquals(8000L, full.get("duration_ms"));
        Document open = StoreDocuments.session(session(false, null));
        assertEquals("open", open.getString("state"));
        assertTrue(!open.containsKey("login_time") && !open.containsKey("logout_time"));
    }

    @Test
    void aVersionIsAnUpsertOfEveryFieldButTheIdByTheId() {
        var model =
                (com.mongodb.client.model.UpdateOneModel<Document>)
                        StoreDocuments.sessionUpsert(session(true, null));
        assertEquals(new Document("_id", "db-01/5/1000"), model.getFilter());
        assertTrue(model.getOptions().isUpsert());
        Document set = ((Document) model.getUpdate()).get("$set", Document.class);
        Document whole = StoreDocuments.session(session(true, null));
        whole.remove("_id");
        assertEquals(whole, set);
    }
}
