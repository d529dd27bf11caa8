package engine

import (
	"fmt"
	"strings"
)

// forEach with several iterators makes one child per combination of their
// items, the first iterator the outer loop, as kro's collections do
// (website/docs/docs/concepts/rgd/02-resource-definitions/04-collections.md:
// "Multiple Iterators (Cartesian Product)"). An empty iterator makes no
// children (2 × 0 = 0).

// product lists the combinations of the iterators' items.
func (fe *ForEach) product(obj map[string]any) ([]Item, error) {
	lists := make([][]Item, len(fe.Iterators))
	count := 1
	for i, it := range fe.Iterators {
		items, err := it.items(obj)
		if err != nil {
			return nil, err
		}
		lists[i] = items
		count = satMulInt(count, len(items))
	}
	if count == 0 {
		return nil, nil
	}
	if count > fe.Limit {
		return nil, &TooManyItemsError{ForEach: fe, Count: count}
	}
	out := make([]Item, 0, count)
	pick := make([]int, len(lists))
	for n := 0; n < count; n++ {
		of := make([]Item, len(lists))
		for i, l := range lists {
			of[i] = l[pick[i]]
		}
		out = append(out, Item{Index: n, Of: of})
		// The last iterator turns fastest.
		for i := len(pick) - 1; i >= 0; i-- {
			if pick[i]++; pick[i] < len(lists[i]) {
				break
			}
			pick[i] = 0
		}
	}
	return out, nil
}

// Describe names an item for messages: `item 2`, `entry eu`, or with
// several iterators `region item 1 × tier entry web`.
func (fe *ForEach) Describe(it Item) string {
	if len(it.Of) == 0 {
		return describeOne(it)
	}
	parts := make([]string, len(it.Of))
	for i, x := range it.Of {
		parts[i] = fe.Iterators[i].As + " " + describeOne(x)
	}
	return strings.Join(parts, " × ")
}

func describeOne(it Item) string {
	if it.Map {
		return fmt.Sprintf("entry %v", it.Each)
	}
	return fmt.Sprintf("item %d", it.Index)
}
