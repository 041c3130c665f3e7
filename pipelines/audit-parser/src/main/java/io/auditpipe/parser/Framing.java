package io.auditpipe.parser;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * How the records of a format are cut out of its file before they reach Kafka: one per line, or
 * several lines each, ended by the line the format's end pattern matches.
 *
 * <p>The collectors do the framing (rsyslog's imfile {@code endmsg.regex}, the catch-up in
 * cli/auditpipe/stack/collector/catchup.py, Fluentd's multiline {@code format_firstline} with the
 * start pattern) with these same patterns, kept in cli/auditpipe/formats.py too (a test compares
 * the two). The patterns use only what POSIX extended, Java, Python and Ruby regular expressions
 * read alike: anchors, bracket expressions, {@code ?}, {@code *}, {@code {m,n}}, groups and
 * alternation. A record's lines are joined with LF, without the last line's newline, as imfile
 * does.
 *
 * <p>The end pattern is what rsyslog, the catch-up and {@code auditpipe parse} frame by: a record
 * is shipped as soon as its last line is written (framed by its first line instead, rsyslog lost
 * the last record of every rotated file, docs/formats.md). The start pattern is for Fluentd, whose
 * multiline parser knows only a first line.
 */
public final class Framing {
    public static final Framing LINES = new Framing(null, null);

    /**
     * One record per line, save for the parts of a Cloud Logging entry it split: those are handed
     * out together, as one record of several lines ({@link CloudSqlMysqlAuditParser.SplitParts}).
     * Only a reader of whole files can gather them; the collectors ship line by line.
     */
    public static final Framing LINES_JOINING_SPLIT_ENTRIES = new Framing(null, null, true);

    /** Split entries held at most while their other parts are awaited, and their characters. */
    static final int SPLIT_ENTRIES_HELD = 1024;

    static final long SPLIT_ENTRIES_CHARS = 64L << 20;

    private final String start;
    private final String end;
    private final boolean joinsSplitEntries;

    /** Both patterns, or neither (one record per line). */
    public Framing(String start, String end) {
        this(start, end, false);
    }

    private Framing(String start, String end, boolean joinsSplitEntries) {
        if ((start == null) != (end == null)) {
            throw new IllegalArgumentException(
                    "a multi-line format needs both a start and an end pattern");
        }
        this.start = start;
        this.end = end;
        this.joinsSplitEntries = joinsSplitEntries;
    }

    /** Whether a record can span several lines. */
    public boolean multiLine() {
        return end != null;
    }

    /** The pattern of a record's first line, or null. */
    public String start() {
        return start;
    }

    /** The pattern of a record's last line, or null. */
    public String end() {
        return end;
    }

    /** Splits lines (without their newlines) into records the way the collector frames them. */
    public Framer framer() {
        return new Framer(
                end == null ? null : Pattern.compile(end),
                joinsSplitEntries
                        ? new CloudSqlMysqlAuditParser.SplitParts(
                                SPLIT_ENTRIES_HELD, SPLIT_ENTRIES_CHARS)
                        : null);
    }

    /**
     * All records of {@code text} (split on LF, empty lines skipped as the collectors skip them),
     * the rest at its end included.
     */
    public List<Framer.Record> records(String text) {
        Framer framer = framer();
        List<Framer.Record> out = new ArrayList<>();
        long n = 0;
        for (String line : text.split("\n", -1)) {
            n++;
            if (!line.isEmpty()) out.addAll(framer.add(line, n));
        }
        out.addAll(framer.finish());
        return out;
    }

    /** Feeds lines one by one; hands out each record as it completes. */
    public static final class Framer {
        private final Pattern end;
        private final CloudSqlMysqlAuditParser.SplitParts splits;
        private final List<String> pending = new ArrayList<>();

        /** 1-based number of the first pending line. */
        private long firstLine;

        Framer(Pattern end, CloudSqlMysqlAuditParser.SplitParts splits) {
            this.end = end;
            this.splits = splits;
        }

        /** A record and the number of its first line. */
        public static final class Record {
            public final String text;
            public final long firstLine;

            Record(String text, long firstLine) {
                this.text = Objects.requireNonNull(text);
                this.firstLine = firstLine;
            }
        }

        /** Adds line number {@code number}; returns the records it completes (zero or one). */
        public List<Record> add(String line, long number) {
            if (splits != null) {
                List<Record> out = new ArrayList<>(1);
                for (CloudSqlMysqlAuditParser.SplitParts.Out o : splits.add(line, number))
                    out.add(new Record(o.text(), o.firstLine()));
                return out;
            }
            if (end == null) {
                return List.of(new Record(line, number));
            }
            if (pending.isEmpty()) firstLine = number;
            pending.add(line);
            if (!end.matcher(line).find()) {
                return List.of();
            }
            Record r = new Record(String.join("\n", pending), firstLine);
            pending.clear();
            return List.of(r);
        }

        /**
         * What is left at the end of the input: the unfinished record (e.g. a file's closing {@code
         * </AUDIT>}), or the split entries whose other parts never came; often nothing.
         */
        public List<Record> finish() {
            List<Record> out = new ArrayList<>();
            if (splits != null) {
                for (CloudSqlMysqlAuditParser.SplitParts.Out o : splits.finish())
                    out.add(new Record(o.text(), o.firstLine()));
            }
            if (!pending.isEmpty()) {
                out.add(new Record(String.join("\n", pending), firstLine));
                pending.clear();
            }
            return out;
        }
    }
}
