//! Lists of lists in two columns: every list's items one after another and
//! where each list ends. Per-task lists of one or two entries, each its own
//! `Vec`, cost 24 bytes of header and a heap block of at least 32 apiece:
//! at 11 M rollouts, a benchmark's Pass@(K,T) counts and the cost
//! frontier's per-task costs held that way were a fifth of their stages'
//! memory (issue 20).

/// A list of lists, appended to at the end.
#[derive(Debug, Clone, PartialEq)]
pub struct Ragged<T> {
    /// Where each list ends in `items`.
    ends: Vec<usize>,
    items: Vec<T>,
}

impl<T> Default for Ragged<T> {
    fn default() -> Self {
        Ragged {
            ends: Vec::new(),
            items: Vec::new(),
        }
    }
}

impl<T> Ragged<T> {
    /// Appends a list.
    pub fn push(&mut self, list: impl IntoIterator<Item = T>) {
        self.items.extend(list);
        self.ends.push(self.items.len());
    }
    /// Appends an item to the last list (there is one).
    pub fn push_to_last(&mut self, item: T) {
        self.items.push(item);
        *self.ends.last_mut().expect("a list to append to") = self.items.len();
    }
    /// List i.
    pub fn get(&self, i: usize) -> &[T] {
        let start = i.checked_sub(1).map_or(0, |j| self.ends[j]);
        &self.items[start..self.ends[i]]
    }
    /// Every list, in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &[T]> {
        (0..self.ends.len()).map(|i| self.get(i))
    }
    /// How many lists.
    pub fn len(&self) -> usize {
        self.ends.len()
    }
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }
    /// Lets go of spare capacity.
    pub fn shrink_to_fit(&mut self) {
        self.ends.shrink_to_fit();
        self.items.shrink_to_fit();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_come_back_as_pushed() {
        let mut r: Ragged<u8> = Ragged::default();
        assert!(r.is_empty());
        r.push([1, 2]);
        r.push([]);
        r.push([3]);
        r.push_to_last(4);
        assert_eq!(r.len(), 3);
        let lists: Vec<&[u8]> = r.iter().collect();
        assert_eq!(lists, vec![&[1, 2][..], &[][..], &[3, 4][..]]);
        r.shrink_to_fit();
        assert_eq!(r.get(1), &[] as &[u8]);
        assert_eq!(r.get(2), &[3, 4]);
    }
}
