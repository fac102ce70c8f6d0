/**
 * Weekly schedules: `{"mon": [{"start": "09:00", "end": "17:00"}], ...}`. A missing or empty day
 * is closed; "24:00" is a valid end. Times are wall-clock times in the owner's time zone.
 */
export const WEEKDAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
export type Weekday = (typeof WEEKDAYS)[number];
export type WeeklySchedule = Partial<Record<Weekday, Array<{ start: string; end: string }>>>;

export interface Problem {
  path: string;
  msg: string;
  code?: string;
}

/** "09:30" → 570; "24:00" → 1440. */
export function minutesOfDay(time: string): number {
  // "DD:DD" (the schemas' pattern) by character codes: every availability search expands every
  // recurring block of its resources through here, and a split per call was an array and three
  // strings (issue 18). Anything else is read as it always was.
  if (time.length === 5 && time.charCodeAt(2) === 58) {
    const h1 = time.charCodeAt(0) - 48;
    const h2 = time.charCodeAt(1) - 48;
    const m1 = time.charCodeAt(3) - 48;
    const m2 = time.charCodeAt(4) - 48;
    if (h1 >= 0 && h1 <= 9 && h2 >= 0 && h2 <= 9 && m1 >= 0 && m1 <= 9 && m2 >= 0 && m2 <= 9) return (h1 * 10 + h2) * 60 + m1 * 10 + m2;
  }
  const [hours, minutes] = time.split(':').map(Number);
  return hours! * 60 + minutes!;
}

/** Each interval must end after it starts, and a day's intervals must not overlap. */
export function weeklyScheduleProblems(schedule: WeeklySchedule, path: string): Problem[] {
  const problems: Problem[] = [];
  for (const day of WEEKDAYS) {
    const intervals = schedule[day] ?? [];
    intervals.forEach((interval, index) => {
      if (minutesOfDay(interval.end) <= minutesOfDay(interval.start)) {
        problems.push({ path: `${path}.${day}.${index}.end`, msg: `${day} interval ${index} must end after it starts`, code: 'BUSINESSHOURS-100' });
      }
    });
    const sorted = intervals
      .map((interval, index) => ({ index, start: minutesOfDay(interval.start), end: minutesOfDay(interval.end) }))
      .sort((a, b) => a.start - b.start);
    for (let i = 1; i < sorted.length; i++) {
      if (sorted[i]!.start < sorted[i - 1]!.end) {
        problems.push({ path: `${path}.${day}.${sorted[i]!.index}.start`, msg: `${day} intervals must not overlap` });
      }
    }
  }
  return problems;
}
