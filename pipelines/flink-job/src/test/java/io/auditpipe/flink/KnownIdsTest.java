package io.auditpipe.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.auditpipe.flink.history.KnownIds;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The known-ids file as `auditpipe import` writes it (cli/auditpipe/archive/history.py
 * known_id_line: one JSON string per line, as Python's json.dumps escapes it): an id holding a line
 * break, a carriage return or a non-ASCII character is known whole.
 */
class KnownIdsTest {
    @TempDir Path dir;

    @Test
    void everyIdIsKnownWholeWhateverItHolds() throws IOException {
        Path file = dir.resolve("known-ids.txt");
        // json.dumps of "db-01/7_2026", "db-01/8\n_x", "db-01/9\r_y" and "db-01/10_é\u2028"
        Files.write(
                file,
                List.of(
                        "\"db-01/7_2026\"",
                        "\"db-01/8\\n_x\"",
                        "\"db-01/9\\r_y\"",
                        "\"db-01/10_\\u00e9\\u2028\"",
                        ""));
        KnownIds known = KnownIds.read(file);
        assertEquals(4, known.size());
        for (String id :
                List.of("db-01/7_2026", "db-01/8\n_x", "db-01/9\r_y", "db-01/10_é\u2028")) {
            assertTrue(known.contains(id), id);
        }
        assertFalse(known.contains("db-01/8"));
        assertFalse(known.contains("_x"));
    }

    @Test
    void aLineThatIsNoJsonStringIsAnError() throws IOException {
        Path file = dir.resolve("bad.txt");
        Files.write(file, List.of("\"db-01/1\"", "db-01/2"));
        assertThrows(IOException.class, () -> KnownIds.read(file));
    }
}
