package io.auditpipe.flink.history;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import io.auditpipe.flink.chain.FirstCopies;
import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The ids of the server's events the archive and the store already hold (one JSON string per line,
 * written by {@code auditpipe import}), known by the 128-bit hash the chain knows ids by ({@link
 * FirstCopies}): a record whose id is among them was shipped or imported before, and is not
 * imported again.
 */
public final class KnownIds {
    private final FirstCopies ids = new FirstCopies();
    private final FirstCopies.IdHasher hasher = new FirstCopies.IdHasher();

    /**
     * The file's ids, each a JSON string on a line of its own (cli/auditpipe/archive/history.py
     * {@code known_id_line}: a line break or any other control character in an id is escaped).
     *
     * @throws IOException also for a line that is not one JSON string
     */
    public static KnownIds read(Path file) throws IOException {
        KnownIds known = new KnownIds();
        try (BufferedReader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            String line;
            long n = 0;
            while ((line = r.readLine()) != null) {
                n++;
                if (line.isEmpty()) continue;
                try (JsonParser p = JSON.createParser(line)) {
                    if (p.nextToken() != JsonToken.VALUE_STRING)
                        throw new IOException(file + " line " + n + " is not a JSON string");
                    String id = p.getText();
                    if (p.nextToken() != null)
                        throw new IOException(
                                file + " line " + n + " holds more than one JSON string");
                    known.add(id);
                }
            }
        }
        return known;
    }

    private static final JsonFactory JSON = new JsonFactory();

    public void add(String id) {
        hasher.hash(id);
        if (ids.lineOf(hasher.high, hasher.low) == FirstCopies.NOT_SEEN) {
            ids.add(hasher.high, hasher.low, FirstCopies.UNKNOWN_LINE, Long.MAX_VALUE);
        }
    }

    public boolean contains(String id) {
        hasher.hash(id);
        return ids.lineOf(hasher.high, hasher.low) != FirstCopies.NOT_SEEN;
    }

    public int size() {
        return ids.size();
    }
}
