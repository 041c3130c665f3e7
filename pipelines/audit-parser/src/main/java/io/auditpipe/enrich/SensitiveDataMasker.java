package io.auditpipe.enrich;

import java.io.Serializable;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Masks primary account numbers, the secrets of account statements ({@link AccountSecrets}) and
 * configured patterns (docs/compliance.md, "Masking").
 *
 * <p>A PAN is 13 to 19 digits, in one run or in groups split by single spaces or hyphens, that
 * passes the Luhn check and starts with 2 to 6 (the major networks' ranges; a 13-digit epoch
 * milliseconds value starts with 1 until 2033 and is left alone). Every digit but the last four is
 * replaced by {@code *}, separators stay: {@code 4111-1111-1111-1111} becomes {@code
 * ****-****-****-1111}. A configured pattern's match has every letter and digit replaced by {@code
 * *}. Masking never changes a text's length, so the same masking works on raw bytes through their
 * ISO-8859-1 view ({@link #mask(byte[])}): a dead letter's bytes are masked without knowing their
 * encoding, and every byte that is not part of a match stays as it was.
 */
public final class SensitiveDataMasker implements Serializable {
    private static final long serialVersionUID = 1L;

    public static final String PAN = "pan";

    /** The name in {@code masked} of account statements' secrets ({@link AccountSecrets}). */
    public static final String CREDENTIALS = "credentials";

    /**
     * The U.S. social security number expression the configuration ships
     * (schemas/config.schema.json, compliance.masking.patterns.us_ssn). A configured pattern
     * spelled exactly so is found by {@link #nextSsn} instead of java.util.regex, which tried it at
     * every character of every text (a fifth of parsing and enrichment's time, profiled
     * 2026-11-24); SensitiveDataMaskerTest compares the two on generated texts. Any other spelling
     * goes to java.util.regex.
     */
    public static final String US_SSN_EXPRESSION = "(?<![0-9])[0-9]{3}-[0-9]{2}-[0-9]{4}(?![0-9])";

    private static boolean isDigit(char c) {
        return c >= '0' && c <= '9';
    }

    private final boolean maskPans;
    private final boolean maskCredentials;
    private final Map<String, String> patternSources;
    private transient Map<String, Pattern> patterns;

    /**
     * @param maskPans whether PANs are masked
     * @param patterns name -> regular expression (java.util.regex) of other data to mask
     * @throws IllegalArgumentException naming the pattern that does not compile
     */
    public SensitiveDataMasker(boolean maskPans, Map<String, String> patterns) {
        this(maskPans, true, patterns);
    }

    /**
     * @param maskCredentials whether the secrets of account statements are masked ({@link
     *     AccountSecrets})
     */
    public SensitiveDataMasker(
            boolean maskPans, boolean maskCredentials, Map<String, String> patterns) {
        this.maskPans = maskPans;
        this.maskCredentials = maskCredentials;
        this.patternSources = new LinkedHashMap<>(patterns);
        compiled();
    }

    public static SensitiveDataMasker none() {
        return new SensitiveDataMasker(false, false, Map.of());
    }

    private Map<String, Pattern> compiled() {
        if (patterns == null) {
            Map<String, Pattern> out = new LinkedHashMap<>();
            for (Map.Entry<String, String> e : patternSources.entrySet()) {
                try {
                    out.put(e.getKey(), Pattern.compile(e.getValue()));
                } catch (java.util.regex.PatternSyntaxException ex) {
                    throw new IllegalArgumentException(
                            "masking pattern '"
                                    + e.getKey()
                                    + "' is not a regular expression: "
                                    + ex.getDescription());
                }
            }
            patterns = out;
        }
        return patterns;
    }

    /**
     * A masked text and the names of what was found in it (empty: nothing masked, the text is the
     * input).
     */
    public record Masked(String text, List<String> found) {
        public boolean changed() {
            return !found.isEmpty();
        }
    }

    public Masked mask(String text) {
        Masked plain = maskPlain(text);
        if (text == null || text.indexOf("base64") < 0) return plain;
        TreeSet<String> found = new TreeSet<>(plain.found());
        String out = maskEncoded(plain.text(), found);
        return out == plain.text() ? plain : new Masked(out, new ArrayList<>(found));
    }

    /**
     * The base64 text of elements that say so ({@code <SQLTEXT encode="base64">}, MySQL Enterprise
     * XML): the parser decodes it, so what masking finds in the decoded text would be readable from
     * the record as written. Such an element's text is masked whole (each base64 character becomes
     * {@code *}, the length kept) when its decoded text holds anything to mask.
     */
    private String maskEncoded(String text, TreeSet<String> found) {
        char[] cs = null;
        for (int at = text.indexOf("encode="); at >= 0; at = text.indexOf("encode=", at + 7)) {
            int q = at + 7;
            if (q + 8 > text.length()) break;
            char quote = text.charAt(q);
            if ((quote != '"' && quote != '\'')
                    || !text.regionMatches(true, q + 1, "base64", 0, 6)
                    || text.charAt(q + 7) != quote) continue;
            int open = text.indexOf('>', q + 8);
            if (open < 0) break;
            int close = text.indexOf('<', open + 1);
            if (close < 0) close = text.length();
            byte[] decoded;
            try {
                decoded = java.util.Base64.getMimeDecoder().decode(text.substring(open + 1, close));
            } catch (IllegalArgumentException notBase64) {
                continue;
            }
            Masked inner = maskPlain(new String(decoded, StandardCharsets.ISO_8859_1));
            if (inner.changed()) {
                if (cs == null) cs = text.toCharArray();
                for (int i = open + 1; i < close; i++) {
                    if (!Character.isWhitespace(cs[i])) cs[i] = '*';
                }
                found.addAll(inner.found());
            }
        }
        return cs == null ? text : new String(cs);
    }

    private Masked maskPlain(String text) {
        if (text == null || text.isEmpty()) return new Masked(text, List.of());
        TreeSet<String> found = new TreeSet<>();
        char[] chars = null;
        if (maskPans && mayHoldPan(text)) {
            // each maximal run of digits with single separators between them, scanned in one pass
            // (a regular expression recursed per digit and overflowed the stack on a long run)
            int n = text.length();
            int i = 0;
            while (i < n) {
                if (!isDigit(text.charAt(i))) {
                    i++;
                    continue;
                }
                int start = i, end = i + 1, digits = 1;
                while (true) {
                    if (end < n && isDigit(text.charAt(end))) {
                        end++;
                        digits++;
                    } else if (end + 1 < n
                            && (text.charAt(end) == ' ' || text.charAt(end) == '-')
                            && isDigit(text.charAt(end + 1))) {
                        end += 2;
                        digits++;
                    } else {
                        break;
                    }
                }
                if (digits >= 13) {
                    if (chars == null) chars = text.toCharArray();
                    if (maskPansIn(chars, start, end)) found.add(PAN);
                }
                i = end;
            }
        }
        if (maskCredentials && AccountSecrets.mayHold(text)) {
            char[] cs = chars == null ? text.toCharArray() : chars;
            if (AccountSecrets.mask(cs)) {
                chars = cs;
                found.add(CREDENTIALS);
            }
        }
        String current = chars == null ? text : new String(chars);
        for (Map.Entry<String, Pattern> p : compiled().entrySet()) {
            if (US_SSN_EXPRESSION.equals(patternSources.get(p.getKey()))) {
                char[] cs = null;
                for (int at = nextSsn(current, 0);
                        at >= 0;
                        at = nextSsn(current, at + SSN_LENGTH)) {
                    if (cs == null) cs = current.toCharArray();
                    maskLettersAndDigits(cs, at, at + SSN_LENGTH);
                    found.add(p.getKey());
                }
                if (cs != null) current = new String(cs);
                continue;
            }
            Matcher m = p.getValue().matcher(current);
            char[] cs = null;
            try {
                while (m.find()) {
                    if (m.end() == m.start()) continue;
                    if (cs == null) cs = current.toCharArray();
                    maskLettersAndDigits(cs, m.start(), m.end());
                    found.add(p.getKey());
                }
            } catch (StackOverflowError tooDeep) {
                // a configured expression that recurses too deep on this text: what it would have
                // matched is unknown, so every letter and digit of the text is masked (fail closed)
                cs = current.toCharArray();
                maskLettersAndDigits(cs, 0, cs.length);
                found.add(p.getKey());
            }
            if (cs != null) current = new String(cs);
        }
        return found.isEmpty()
                ? new Masked(text, List.of())
                : new Masked(current, new ArrayList<>(found));
    }

    /** A configured pattern's match: every letter and digit becomes {@code *}. */
    private static void maskLettersAndDigits(char[] cs, int from, int to) {
        for (int i = from; i < to; i++) {
            if (Character.isLetterOrDigit(cs[i])) cs[i] = '*';
        }
    }

    private static final int SSN_LENGTH = 11; // ddd-dd-dddd

    /**
     * Where {@link #US_SSN_EXPRESSION}'s next match starts at or after {@code from}, or -1: the
     * leftmost {@code ddd-dd-dddd} with no digit right before or after it. Each match's first
     * hyphen is 3 characters in, so only the hyphens are visited.
     */
    static int nextSsn(String t, int from) {
        int n = t.length();
        for (int dash = t.indexOf('-', from + 3);
                dash >= 0 && dash + 8 <= n;
                dash = t.indexOf('-', dash + 1)) {
            int s = dash - 3;
            if (s > 0 && isDigit(t.charAt(s - 1))) continue;
            if (isDigit(t.charAt(s))
                    && isDigit(t.charAt(s + 1))
                    && isDigit(t.charAt(s + 2))
                    && isDigit(t.charAt(s + 4))
                    && isDigit(t.charAt(s + 5))
                    && t.charAt(s + 6) == '-'
                    && isDigit(t.charAt(s + 7))
                    && isDigit(t.charAt(s + 8))
                    && isDigit(t.charAt(s + 9))
                    && isDigit(t.charAt(s + 10))
                    && (s + 11 == n || !isDigit(t.charAt(s + 11)))) {
                return s;
            }
        }
        return -1;
    }

    /**
     * Whether the text has a run of 13 or more digits with at most single separators between them:
     * the cheap test before the regular expression (most texts have no such run).
     */
    static boolean mayHoldPan(String text) {
        int digits = 0;
        boolean lastWasSeparator = false;
        for (int i = 0, n = text.length(); i < n; i++) {
            char c = text.charAt(i);
            if (c >= '0' && c <= '9') {
                if (++digits >= 13) return true;
                lastWasSeparator = false;
            } else if ((c == ' ' || c == '-') && digits > 0 && !lastWasSeparator) {
                lastWasSeparator = true;
            } else {
                digits = 0;
                lastWasSeparator = false;
            }
        }
        return false;
    }

    /**
     * The same masking on bytes, through their ISO-8859-1 view; returns the input when nothing
     * matched.
     */
    public byte[] mask(byte[] bytes) {
        if (bytes == null || bytes.length == 0) return bytes;
        Masked m = mask(new String(bytes, StandardCharsets.ISO_8859_1));
        return m.changed() ? m.text().getBytes(StandardCharsets.ISO_8859_1) : bytes;
    }

    /** The names found in the bytes (empty when none). */
    public List<String> find(byte[] bytes) {
        if (bytes == null || bytes.length == 0) return List.of();
        return mask(new String(bytes, StandardCharsets.ISO_8859_1)).found();
    }

    /**
     * Masks each PAN inside one run of digits and separators [from, to). The run is split into its
     * groups (digits between separators); a PAN is one group, or consecutive groups, of 13-19
     * digits in all that passes Luhn. Returns whether anything was masked.
     */
    static boolean maskPansIn(char[] c, int from, int to) {
        List<int[]> groups = new ArrayList<>(); // [start, end) of each digit group
        int i = from;
        while (i < to) {
            int s = i;
            while (i < to && c[i] >= '0' && c[i] <= '9') i++;
            groups.add(new int[] {s, i});
            i++; // the separator
        }
        boolean any = false;
        int g = 0;
        while (g < groups.size()) {
            int matchedUpTo = -1;
            int digits = 0;
            for (int h = g; h < groups.size(); h++) {
                digits += groups.get(h)[1] - groups.get(h)[0];
                if (digits > 19) break;
                if (digits >= 13 && isPan(c, groups.get(g)[0], groups.get(h)[1])) {
                    matchedUpTo = h; // the longest match from this group
                }
            }
            if (matchedUpTo >= 0) {
                maskDigitsButLastFour(c, groups.get(g)[0], groups.get(matchedUpTo)[1]);
                any = true;
                g = matchedUpTo + 1;
            } else {
                g++;
            }
        }
        return any;
    }

    private static boolean isPan(char[] c, int from, int to) {
        char first = 0;
        int sum = 0;
        int n = 0;
        for (int i = to - 1; i >= from; i--) {
            char ch = c[i];
            if (ch < '0' || ch > '9') continue;
            int d = ch - '0';
            if (n % 2 == 1) {
                d *= 2;
                if (d > 9) d -= 9;
            }
            sum += d;
            n++;
            first = ch;
        }
        return first >= '2' && first <= '6' && sum % 10 == 0;
    }

    private static void maskDigitsButLastFour(char[] c, int from, int to) {
        int keep = 4;
        for (int i = to - 1; i >= from; i--) {
            if (c[i] < '0' || c[i] > '9') continue;
            if (keep > 0) {
                keep--;
            } else {
                c[i] = '*';
            }
        }
    }
}
