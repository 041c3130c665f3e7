package io.auditpipe.flink.history;

import io.auditpipe.flink.chain.FirstCopies;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The ids of the server's events the archive and the store already hold (one per line, written by
 * {@code auditpipe import}), known by the 128-bit hash the chain knows ids by ({@link FirstCopies}):
 * a record whose id is among them was shipped or imported before, and is not imported again.
 */
public final class KnownIds {
    private final FirstCopies ids = new FirstCopies();
    private final FirstCopies.IdHasher hasher = new FirstCopies.IdHasher();

    public static KnownIds read(Path file) throws IOException {
        KnownIds known = new KnownIds();
        try (BufferedReader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            String id;
            while ((id = r.readLine()) != null) {
                if (!id.isEmpty()) known.add(id);
            }
        }
        return known;
    }

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
