package io.auditpipe.parser;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * How the records of a format are cut out of its file before they reach Kafka: one per line, or
 * several lines each, found by the line a record ends with or starts with.
 *
 * <p>The collectors do the framing (rsyslog's imfile {@code endmsg.regex}/{@code startmsg.regex},
 * Fluentd's multiline {@code format_firstline}, the catch-up in cli/auditpipe/catchup.py) with
 * these same patterns, kept in cli/auditpipe/formats.py too (a test compares the two). The patterns
 * use only what POSIX extended, Java, Python and Ruby regular expressions read alike: anchors,
 * bracket expressions, {@code ?}, {@code *}, {@code {m,n}}, groups and alternation. A record's lines
 * are joined with LF, without the last line's newline, as imfile does.
 *
 * <p>When a format has an end pattern the collectors that can use it do (a record is shipped as
 * soon as its last line is written); the start pattern is for Fluentd, which has only that, and
 * for formats whose records have no recognizable last line (CSV with multi-line statements). A
 * record found by its start is complete when the next one starts, or after a short quiet time.
 */
public final class Framing {
    public enum Kind { LINE, END, START }

    public static final Framing LINES = new Framing(null, null);

    private final String start;
    private final String end;

    public Framing(String start, String end) {
        this.start = start;
        this.end = end;
    }

    /** The kind the local collector (rsyslog) and the offline parser use: END if there is an end pattern. */
    public Kind kind() {
        return end != null ? Kind.END : start != null ? Kind.START : Kind.LINE;
    }

    /** The pattern of a record's first line, or null. */
    public String start() { return start; }

    /** The pattern of a record's last line, or null. */
    public String end() { return end; }

    /** Splits lines (without their newlines) into records the way the collector frames them. */
    public Framer framer() {
        return new Framer(this);
    }

    /** Feeds lines one by one; hands out each record as it completes. */
    public static final class Framer {
        private final Kind kind;
        private final Pattern pattern;
        private final List<String> pending = new ArrayList<>();
        /** 1-based number of the first pending line. */
        private long firstLine;

        Framer(Framing f) {
            this.kind = f.kind();
            this.pattern = kind == Kind.END ? Pattern.compile(f.end) : kind == Kind.START ? Pattern.compile(f.start) : null;
        }

        /** A record and the number of its first line. */
        public static final class Record {
            public final String text;
            public final long firstLine;

            Record(String text, long firstLine) {
                this.text = text;
                this.firstLine = firstLine;
            }
        }

        /** Adds line number {@code number}; returns the records it completes (zero or one). */
        public List<Record> add(String line, long number) {
            List<Record> out = new ArrayList<>(1);
            switch (kind) {
                case LINE:
                    out.add(new Record(line, number));
                    break;
                case END:
                    if (pending.isEmpty()) firstLine = number;
                    pending.add(line);
                    if (pattern.matcher(line).find()) {
                        out.add(take());
                    }
                    break;
                case START:
                    if (pattern.matcher(line).find() && !pending.isEmpty()) {
                        out.add(take());
                    }
                    if (pending.isEmpty()) firstLine = number;
                    pending.add(line);
                    break;
                default:
                    throw new IllegalStateException();
            }
            return out;
        }

        /** What is left at the end of the input: the last record (START) or an unfinished one (END), or null. */
        public Record finish() {
            return pending.isEmpty() ? null : take();
        }

        private Record take() {
            Record r = new Record(String.join("\n", pending), firstLine);
            pending.clear();
            return r;
        }
    }
}
