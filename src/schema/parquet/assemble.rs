//! Arrow arrays assembled from the pages read: lists, one leaf of a struct, the steps pruned to the fields kept.

use super::*;

/// Decoded chunks as one array.
pub(super) fn one_array(arrays: Vec<ArrayRef>) -> PolarsResult<ArrayRef> {
    match arrays.len() {
        1 => Ok(arrays.into_iter().next().expect("one array")),
        _ if matches!(arrays[0].dtype(), ArrowDataType::Dictionary(..)) => {
            // polars-arrow does not concatenate dictionary arrays (pandas'
            // categoricals, as pyarrow writes them, over several pages of
            // a window: an internal error at 57,600 rows): their strings.
            let mut out: Option<Series> = None;
            for a in arrays {
                let field = ArrowField::new(PlSmallStr::EMPTY, a.dtype().clone(), true);
                let s = Series::try_from((&field, vec![a]))?.cast(&DataType::String)?;
                match &mut out {
                    Some(o) => {
                        o.append(&s)?;
                    }
                    None => out = Some(s),
                }
            }
            let s = out.expect("two or more arrays").rechunk();
            Ok(s.to_arrow(0, CompatLevel::newest()))
        }
        _ => {
            let refs: Vec<&dyn polars_arrow::array::Array> =
                arrays.iter().map(|a| a.as_ref()).collect();
            polars_arrow::compute::concatenate::concatenate(&refs)
        }
    }
}

/// [`assemble`] for lists (`item`: their values' type).
pub(super) fn assemble_lists<O: polars_arrow::offset::Offset>(
    dtype: &ArrowDataType,
    item: &ArrowDataType,
    parts: Vec<ArrayRef>,
) -> PolarsResult<ArrayRef> {
    use polars_arrow::array::ListArray;
    let lists = parts
        .iter()
        .map(|p| p.as_any().downcast_ref::<ListArray<O>>())
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| polars_err!(ComputeError: "a leaf decoded as another type"))?;
    // A list kept from an earlier window is a slice: its offsets start
    // past 0 into its whole values. Each part's values are cut to its rows
    // and the first part's offsets rebased to 0.
    let values = lists
        .iter()
        .map(|l| {
            let (a, b) = (
                l.offsets().first().to_usize(),
                l.offsets().last().to_usize(),
            );
            l.values().sliced(a, b - a)
        })
        .collect();
    let values = assemble(item, values)?;
    let l0 = lists[0];
    let a = *l0.offsets().first();
    let offsets: Vec<O> = l0.offsets().iter().map(|&o| o - a).collect();
    Ok(ListArray::<O>::try_new(
        dtype.clone(),
        offsets.try_into()?,
        values,
        l0.validity().cloned(),
    )?
    .boxed())
}

/// Whether a column's leaves can be decoded one by one and put back
/// together ([`assemble`]): lists and structs down to plain leaves.
pub(super) fn splittable(dtype: &ArrowDataType) -> bool {
    match dtype {
        ArrowDataType::List(item) | ArrowDataType::LargeList(item) => splittable(&item.dtype),
        ArrowDataType::Struct(fields) => fields.iter().all(|f| splittable(&f.dtype)),
        d => {
            polars_parquet::read::n_columns(d) == 1
                && !matches!(d, ArrowDataType::FixedSizeList(..) | ArrowDataType::Map(..))
        }
    }
}

/// `field` with only its leaf `j` (in the file's order).
pub(super) fn only_leaf(field: &ArrowField, j: usize) -> ArrowField {
    let dtype = match &field.dtype {
        ArrowDataType::List(item) => ArrowDataType::List(Box::new(only_leaf(item, j))),
        ArrowDataType::LargeList(item) => ArrowDataType::LargeList(Box::new(only_leaf(item, j))),
        ArrowDataType::Struct(fields) => {
            let mut j = j;
            let mut one = Vec::new();
            for f in fields {
                let n = polars_parquet::read::n_columns(&f.dtype);
                if j < n {
                    one.push(only_leaf(f, j));
                    break;
                }
                j -= n;
            }
            ArrowDataType::Struct(one)
        }
        d => d.clone(),
    };
    ArrowField {
        dtype,
        ..field.clone()
    }
}

/// Leaves decoded one by one ([`only_leaf`], in the file's order) put back
/// together as one array of `dtype`: the lists' offsets and validity and
/// the structs' validity are the first part's (every leaf's levels carry
/// them alike).
pub(super) fn assemble(dtype: &ArrowDataType, parts: Vec<ArrayRef>) -> PolarsResult<ArrayRef> {
    use polars_arrow::array::StructArray;
    if parts.is_empty() {
        polars_bail!(ComputeError: "no leaf decoded for {dtype:?}");
    }
    // A dictionary column's strings ([`one_array`]) stand for it.
    let strings_for = |d: &ArrowDataType| {
        matches!(dtype, ArrowDataType::Dictionary(..))
            && matches!(
                d,
                ArrowDataType::Utf8View | ArrowDataType::LargeUtf8 | ArrowDataType::Utf8
            )
    };
    if parts.len() == 1 && (parts[0].dtype() == dtype || strings_for(parts[0].dtype())) {
        return Ok(parts.into_iter().next().expect("one part"));
    }
    match dtype {
        ArrowDataType::List(item) => assemble_lists::<i32>(dtype, &item.dtype, parts),
        ArrowDataType::LargeList(item) => assemble_lists::<i64>(dtype, &item.dtype, parts),
        ArrowDataType::Struct(fields) => {
            let structs = parts
                .iter()
                .map(|p| p.as_any().downcast_ref::<StructArray>())
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| polars_err!(ComputeError: "a leaf decoded as another type"))?;
            let children = fields
                .iter()
                .map(|f| {
                    let group = structs
                        .iter()
                        .filter(|s| s.fields().first().is_some_and(|g| g.name == f.name))
                        .map(|s| s.values()[0].clone())
                        .collect();
                    assemble(&f.dtype, group)
                })
                .collect::<PolarsResult<Vec<_>>>()?;
            let s0 = structs[0];
            Ok(
                StructArray::try_new(dtype.clone(), s0.len(), children, s0.validity().cloned())?
                    .boxed(),
            )
        }
        _ => polars_bail!(ComputeError: "{} leaves put together as {dtype:?}", parts.len()),
    }
}

/// Whether leaf `leaf` (in the file's order) of column `name` holds no
/// value in any row group: every row group's statistics say so
/// (`null_count` = `num_values`; false without statistics).
pub(super) fn holds_no_value(
    meta: &polars_parquet::read::FileMetadata,
    name: &str,
    leaf: usize,
) -> bool {
    meta.row_groups.iter().all(|rg| {
        rg.columns_under_root_iter(name)
            .and_then(|mut leaves| leaves.nth(leaf))
            .and_then(|m| {
                let n = m.statistics(&meta.footer_buf)?.ok()?.null_count()?;
                Some(n == m.num_values())
            })
            .unwrap_or(false)
    })
}

/// Whether a step field of type `dtype` holding no value reads as if it
/// were absent: its reader in [`parse_trajectories`] ([`ints`], [`floats`],
/// [`bools`]) takes the type. Another type is reported, null or not, so
/// such a field is decoded.
pub(super) fn reads_as_absent(name: &str, dtype: &ArrowDataType) -> bool {
    let d = DataType::from_arrow_dtype(dtype);
    d == DataType::Null
        || match name {
            "turn" | "output_tokens" | "budget_total" | "budget_remaining" => {
                is_int(&d) || d.is_float()
            }
            "reward" => d.is_primitive_numeric(),
            "error" => d == DataType::Boolean,
            _ => false,
        }
}

/// `steps` as a list of structs of the `step_fields` it has ([`STEP_FIELDS`] for the load), and which
/// of its leaves (in the file's order) those are; `None` when it is not a
/// list of structs (it is then read whole, and its type reported). A field
/// of one leaf that holds no value in any row group ([`holds_no_value`]:
/// budget fields most trainers leave empty) and
/// [`reads_as_absent`] is left out too: it reads as the absent field it
/// stands for (gen_large's files: 2 of the 7 step leaves read).
/// One field is always kept: the steps' lists come from a kept leaf.
pub(super) fn pruned_steps(
    steps: &ArrowField,
    meta: &polars_parquet::read::FileMetadata,
    step_fields: &[&str],
) -> Option<(ArrowField, Vec<bool>)> {
    if steps.name != "steps" {
        return None;
    }
    let (ArrowDataType::List(item) | ArrowDataType::LargeList(item)) = &steps.dtype else {
        return None;
    };
    let ArrowDataType::Struct(fields) = &item.dtype else {
        return None;
    };
    let mut keep = Vec::new();
    let mut kept = Vec::new();
    let mut first_wanted = None;
    for f in fields {
        let leaves = polars_parquet::read::n_columns(&f.dtype);
        let mut wanted = step_fields.contains(&f.name.as_str());
        if wanted {
            first_wanted.get_or_insert((keep.len(), f));
        }
        // Statistics read only for a field that could be left out.
        if wanted && leaves == 1 && reads_as_absent(&f.name, &f.dtype) {
            wanted = !holds_no_value(meta, &steps.name, keep.len());
        }
        keep.extend(std::iter::repeat_n(wanted, leaves));
        if wanted {
            kept.push(f.clone());
        }
    }
    if kept.is_empty() {
        if let Some((leaf, f)) = first_wanted {
            keep[leaf] = true;
            kept.push(f.clone());
        }
    }
    if kept.is_empty() || kept.len() == fields.len() {
        return None;
    }
    let item = Box::new(ArrowField {
        dtype: ArrowDataType::Struct(kept),
        ..(**item).clone()
    });
    let dtype = match &steps.dtype {
        ArrowDataType::LargeList(_) => ArrowDataType::LargeList(item),
        _ => ArrowDataType::List(item),
    };
    Some((
        ArrowField {
            dtype,
            ..steps.clone()
        },
        keep,
    ))
}
