package io.auditpipe.enrich;

import java.io.Serializable;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * A name pattern of the compliance config: {@code *} any run of characters, {@code ?} one
 * character, everything else literal, case-insensitive ({@code shop.card*}, {@code svc_*}).
 */
public final class Glob implements Serializable {
    private static final long serialVersionUID = 1L;

    private final String text;
    private transient Pattern pattern;

    public Glob(String text) {
        if (text == null || text.isBlank()) throw new IllegalArgumentException("an empty pattern");
        this.text = text.trim();
    }

    public boolean matches(String name) {
        if (name == null) return false;
        // most patterns are a name, or a name and one trailing *: no regular expression for those
        int star = text.indexOf('*');
        if (text.indexOf('?') < 0 && (star < 0 || star == text.length() - 1)) {
            return star < 0
                    ? text.equalsIgnoreCase(name)
                    : name.regionMatches(true, 0, text, 0, star);
        }
        if (pattern == null) {
            StringBuilder re = new StringBuilder();
            for (char c : text.toLowerCase(Locale.ROOT).toCharArray()) {
                if (c == '*') re.append(".*");
                else if (c == '?') re.append('.');
                else re.append(Pattern.quote(String.valueOf(c)));
            }
            pattern = Pattern.compile(re.toString(), Pattern.DOTALL);
        }
        return pattern.matcher(name.toLowerCase(Locale.ROOT)).matches();
    }

    public String text() {
        return text;
    }

    @Override
    public String toString() {
        return text;
    }
}
