package io.auditpipe.flink.history;

import java.io.IOException;
import java.io.Serializable;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.LongConsumer;

/**
 * For each point of an import's files, in the order they are read: the earliest stream time of the
 * records from there to the end. The import's watermark follows it ({@link
 * io.auditpipe.flink.functions.FloorWatermarks}), so it never passes a record still to come: a
 * bounded input has no late record, whatever the order of its times (a clock stepped back, local
 * time across a daylight-saving change, rotated files whose times overlap), and every record is
 * counted in its minute, hour and day (docs/archive.md "Imported history").
 *
 * <p>Found by reading the files once before the import ({@link #scan}: only parsed, neither
 * enriched nor masked, the files on as many threads as there are cores) and kept per block of
 * {@link #BLOCK} records: two numbers per block (the block's first line and its floor), so the
 * whole of a quarter's history takes a few kilobytes. A record's floor is its block's, which may
 * lie a block's worth of records behind the exact one; the watermark then trails by that much more,
 * never less.
 */
public final class TimeFloors implements Serializable {
    private static final long serialVersionUID = 1L;

    /** Records per block. */
    public static final int BLOCK = 1_000;

    /**
     * The floor of a record the scan did not see (a file grown since): it does not move the
     * watermark.
     */
    public static final long UNKNOWN = Long.MIN_VALUE;

    /** Per file, the first line of each block's first record. */
    private final long[][] blockLines;

    /**
     * Per file, per block: the earliest stream time of the block's records and of every record read
     * after them.
     */
    private final long[][] floors;

    /** Per file, the first line of the last record the scan read. */
    private final long[] lastLines;

    private TimeFloors(long[][] blockLines, long[][] floors, long[] lastLines) {
        this.blockLines = blockLines;
        this.floors = floors;
        this.lastLines = lastLines;
    }

    /**
     * Reads {@code files}' record times, the files on as many threads as there are cores (each
     * file's blocks are its own until they are joined, in the order given); {@code bytesRead} hears
     * each file's bytes as they are read, from those threads.
     */
    public static TimeFloors scan(
            List<Path> files, FileRecords.Settings settings, LongConsumer bytesRead)
            throws IOException {
        int threads =
                Math.max(1, Math.min(files.size(), Runtime.getRuntime().availableProcessors()));
        ExecutorService pool =
                Executors.newFixedThreadPool(
                        threads,
                        r -> {
                            Thread t = new Thread(r, "import-time-floors");
                            t.setDaemon(true);
                            return t;
                        });
        try {
            List<Future<long[][]>> each = new ArrayList<>();
            for (Path file : files) each.add(pool.submit(() -> blocks(file, settings, bytesRead)));
            List<long[][]> blocks = new ArrayList<>();
            for (Future<long[][]> f : each) blocks.add(f.get());
            return join(blocks);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof IOException io) throw io;
            throw new IOException(e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while reading the files' times", e);
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * The floors of files' blocks ({@link #blocks}, in the order read): each block's earliest time
     * joined with every later one's.
     */
    private static TimeFloors join(List<long[][]> files) {
        long[][] lines = new long[files.size()][];
        long[][] mins = new long[files.size()][];
        long[] last = new long[files.size()];
        for (int f = 0; f < files.size(); f++) {
            lines[f] = files.get(f)[0];
            mins[f] = files.get(f)[1].clone();
            last[f] = files.get(f)[2][0];
        }
        long later = Long.MAX_VALUE; // the earliest time of everything after the block at hand
        for (int f = files.size() - 1; f >= 0; f--) {
            for (int b = mins[f].length - 1; b >= 0; b--) {
                later = Math.min(later, mins[f][b]);
                mins[f][b] = later;
            }
        }
        return new TimeFloors(lines, mins, last);
    }

    /** One file's blocks: {first lines, earliest times, {the last record's first line}}. */
    private static long[][] blocks(Path file, FileRecords.Settings settings, LongConsumer bytesRead)
            throws IOException {
        List<long[]> blocks = new ArrayList<>(); // {first line, earliest time}
        long[] block = null;
        int inBlock = 0;
        long before = 0;
        long last;
        try (FileRecords records = new FileRecords(file, settings, null)) {
            long t;
            while ((t = records.nextStreamTime()) != FileRecords.END) {
                if (block == null || inBlock == BLOCK) {
                    block = new long[] {records.lastFirstLine, Long.MAX_VALUE};
                    blocks.add(block);
                    inBlock = 0;
                    bytesRead.accept(records.bytesRead() - before);
                    before = records.bytesRead();
                }
                block[1] = Math.min(block[1], t);
                inBlock++;
            }
            bytesRead.accept(records.bytesRead() - before);
            last = records.lastFirstLine;
        }
        return new long[][] {
            blocks.stream().mapToLong(b -> b[0]).toArray(),
            blocks.stream().mapToLong(b -> b[1]).toArray(),
            {last}
        };
    }

    /** The records of one file, read in order: each one's floor. */
    public Cursor cursor(int file) {
        return new Cursor(file);
    }

    /** Walks a file's blocks as its records come, in the order of their lines. */
    public final class Cursor {
        private final long[] lines;
        private final long[] fileFloors;
        private final long lastLine;
        private int block = -1;

        private Cursor(int file) {
            this.lines = blockLines[file];
            this.fileFloors = floors[file];
            this.lastLine = lastLines[file];
        }

        /**
         * The floor of the record whose first line is {@code firstLine}: no record from it to the
         * end of the import has an earlier stream time. {@link #UNKNOWN} for a record the scan did
         * not read (written to the file after it).
         */
        public long floor(long firstLine) {
            if (firstLine > lastLine) return UNKNOWN;
            while (block + 1 < lines.length && lines[block + 1] <= firstLine) block++;
            return block < 0 ? UNKNOWN : fileFloors[block];
        }
    }
}
