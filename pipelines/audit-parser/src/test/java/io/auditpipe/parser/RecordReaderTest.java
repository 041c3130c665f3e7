package io.auditpipe.parser;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.auditpipe.enrich.ComplianceSettings;
import io.auditpipe.reader.RecordReader;
import org.junit.jupiter.api.Test;

/** The reader keeps the last key it read: each record still gets what its own key says. */
class RecordReaderTest {
    private static byte[] key(String server) {
        return PerconaLines.utf8(
                "{\"v\":1,\"server\":\""
                        + server
                        + "\",\"format\":\"percona-json\",\"source\":\"/a/audit.log\",\"collector\":\"rsyslog\"}");
    }

    @Test
    void eachRecordIsReadUnderItsOwnKey() {
        RecordReader reader = new RecordReader(ComplianceSettings.defaults());
        byte[] line = PerconaLines.query("select", "SELECT 1", 0).bytes();
        byte[] db01 = key("db-01");
        assertEquals("db-01", reader.read(db01, line).event().server);
        assertEquals("db-01", reader.read(db01.clone(), line).event().server);
        assertEquals("db-02", reader.read(key("db-02"), line).event().server);
        RecordReader.Read bad = reader.read(PerconaLines.utf8("{\"v\":1}"), line);
        assertNull(bad.event());
        assertEquals(RecordReader.STAGE_PARSE, bad.failure().stage());
        assertNull(reader.read(null, line).event());
        db01[db01.length - 3] = 'x'; // a key changed in place after it was read: read anew
        assertEquals("rsyslox", reader.read(db01, line).event().collector);
        assertEquals("db-01", reader.read(key("db-01"), line).event().server);
    }
}
