import { TextInput, type TextInputProps } from '@mantine/core';
import { useDebouncedCallback } from '@mantine/hooks';
import { IconSearch } from '@tabler/icons-react';
import { useState } from 'react';

export interface SearchInputProps extends Omit<TextInputProps, 'value' | 'onChange' | 'defaultValue'> {
  /** The value in effect (usually from the URL). */
  value: string;
  /** Called with the trimmed text once typing pauses for `delay` ms (or at once on Enter). */
  onSearch: (value: string) => void;
  delay?: number;
}

/**
 * A text box that searches as you type without a request per keystroke: it keeps what is typed, and
 * hands it on once typing pauses. When `value` changes from outside (Back, a link), the box shows it.
 */
export function SearchInput({ value, onSearch, delay = 300, leftSection, ...props }: SearchInputProps) {
  const [text, setText] = useState(value);
  const [shown, setShown] = useState(value);
  const search = useDebouncedCallback((next: string) => onSearch(next.trim()), delay);
  if (value !== shown) {
    // Adjusting state while rendering (not in an effect): the outside value changed since the last render.
    setShown(value);
    if (value !== text.trim()) setText(value);
  }
  return (
    <TextInput
      type="search"
      leftSection={leftSection ?? <IconSearch size={16} aria-hidden />}
      {...props}
      value={text}
      onChange={(event) => {
        setText(event.currentTarget.value);
        search(event.currentTarget.value);
      }}
      onKeyDown={(event) => {
        if (event.key === 'Enter') search.flush();
      }}
    />
  );
}
