package io.auditpipe.parser;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * Whatever a line holds, every parser answers with an event or a reason, never an exception (an
 * exception in the job's source would fail the job, and its replay would fail again). Inputs:
 * random bytes, and real records of each format with bytes changed, cut, or inserted. Every seed
 * goes through every parser (a record in another format must be refused with a reason too).
 */
class ParsersNeverThrowTest {
    private static final List<String> SEEDS =
            List.of(
                    "{\"audit_record\":{\"name\":\"Query\",\"record\":\"3_2026-11-22T09:00:00\",\"timestamp\":\"2026-11-22T09:00:00 UTC\","
                            + "\"command_class\":\"select\",\"connection_id\":\"7\",\"status\":0,\"sqltext\":\"SELECT 1\","
                            + "\"user\":\"app[app] @ app-1 [10.0.0.5]\",\"host\":\"app-1\",\"ip\":\"10.0.0.5\",\"db\":\"shop\"}}",
                    "20261122 19:15:00,db-host,root,localhost,3,3,QUERY,shop,'INSERT INTO t VALUES (1,\\'it\\'\\'s\\')',0",
                    "20261122 19:15:00,db-host,bob,localhost,4,0,FAILED_CONNECT,,,1045",
                    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<AUDIT>\n<AUDIT_RECORD\n  NAME=\"Query\"\n  RECORD=\"3_2026-11-22T09:00:00\"\n"
                            + "  TIMESTAMP=\"2026-11-22T09:00:02 UTC\"\n  CONNECTION_ID=\"11\"\n  STATUS=\"0\"\n"
                            + "  SQLTEXT=\"SELECT a&#10;FROM t WHERE x = &quot;&lt;&amp;&quot;\"\n  USER=\"app[app] @ localhost [10.0.0.5]\"\n/>",
                    "<AUDIT_RECORD>\n  <NAME>Connect</NAME>\n  <RECORD_ID>2_2026-11-22T09:00:00</RECORD_ID>\n"
                            + "  <TIMESTAMP>2026-11-22T09:00:01 UTC</TIMESTAMP>\n  <STATUS>1045</STATUS>\n  <OS_LOGIN/>\n  <SQLTEXT encode=\"base64\">U0VMRUNUIDE=</SQLTEXT>\n</AUDIT_RECORD>\n</AUDIT>",
                    "\"Query\",\"3_2026-11-22T09:00:00\",\"2026-11-22T09:00:02 UTC\",\"select\",\"11\",0,\"SELECT \"\"a\"\"\nFROM t\","
                            + "\"app[app] @ localhost [10.0.0.5]\",\"localhost\",\"\",\"10.0.0.5\",\"shop\"",
                    "[\n  {\n    \"timestamp\": \"2026-11-22 09:00:02\",\n    \"id\": 1,\n    \"class\": \"general\",\n    \"event\": \"status\",\n"
                            + "    \"account\": { \"user\": \"app\", \"host\": \"%\" },\n    \"general_data\": { \"query\": \"SELECT 1\", \"status\": 0 }\n  },",
                    "{\"msg-type\":\"activity\",\"date\":\"1795338002000\",\"thread-id\":\"11\",\"query-id\":\"3\",\"user\":\"app\","
                            + "\"cmd\":\"select\",\"objects\":[{\"db\":\"shop\",\"name\":\"t\"}],\"query\":\"SELECT 1\"}");

    private static void answers(byte[] line) {
        for (String format : AuditFormats.names()) {
            SourceDescriptor source = new SourceDescriptor("s", format, "/f", "test");
            ParseResult r = AuditFormats.parse(line, source);
            assertNotNull(r);
            if (r.isOk()) {
                assertNotNull(r.event().id);
                assertTrue(r.event().id.startsWith("s/"));
            } else if (r.isFraming()) {
                assertFalse(r.framing().isEmpty(), "what the framing was");
            } else {
                assertFalse(r.failureReason() == null || r.failureReason().isEmpty(), "a reason");
            }
        }
    }

    @Property(tries = 2000)
    void randomBytes(@ForAll("bytes") byte[] line) {
        answers(line);
    }

    @Property(tries = 3000)
    void mutatedRecords(
            @ForAll("seeds") String seed,
            @ForAll("positions") int at,
            @ForAll byte value,
            @ForAll("mutations") int how) {
        byte[] b = seed.getBytes(StandardCharsets.UTF_8);
        int i = Math.floorMod(at, b.length);
        byte[] changed;
        switch (how) {
            case 0:
                changed = b.clone();
                changed[i] = value;
                break; // a byte changed
            case 1:
                changed = java.util.Arrays.copyOf(b, i);
                break; // cut
            default: // a byte inserted
                changed = new byte[b.length + 1];
                System.arraycopy(b, 0, changed, 0, i);
                changed[i] = value;
                System.arraycopy(b, i, changed, i + 1, b.length - i);
        }
        answers(changed);
    }

    @Provide
    Arbitrary<byte[]> bytes() {
        return Arbitraries.bytes().array(byte[].class).ofMaxSize(300);
    }

    @Provide
    Arbitrary<String> seeds() {
        return Arbitraries.of(SEEDS);
    }

    @Provide
    Arbitrary<Integer> positions() {
        return Arbitraries.integers().between(0, 10_000);
    }

    @Provide
    Arbitrary<Integer> mutations() {
        return Arbitraries.integers().between(0, 2);
    }
}
