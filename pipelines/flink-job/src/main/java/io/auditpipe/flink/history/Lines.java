package io.auditpipe.flink.history;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;

/** A stream's lines split on LF, without it, as bytes: how the collectors split a file. */
public final class Lines {
    private final InputStream in;
    private final byte[] buf = new byte[1 << 16];
    private int pos, len;

    public Lines(InputStream in) {
        this.in = in;
    }

    /** The next line, or null at the end of the stream. */
    public byte[] next() throws IOException {
        ByteArrayOutputStream line = null;
        while (true) {
            if (pos == len) {
                len = in.read(buf);
                pos = 0;
                if (len <= 0) {
                    len = 0;
                    return line == null ? null : line.toByteArray();
                }
            }
            int start = pos;
            while (pos < len && buf[pos] != '\n') pos++;
            if (line == null) {
                if (pos < len) { // the whole line is in the buffer: one copy
                    byte[] whole = java.util.Arrays.copyOfRange(buf, start, pos);
                    pos++;
                    return whole;
                }
                line = new ByteArrayOutputStream();
            }
            line.write(buf, start, pos - start);
            if (pos < len) {
                pos++; // the LF
                return line.toByteArray();
            }
        }
    }
}
